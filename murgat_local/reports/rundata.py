"""What `murgat report` reads: `murgat score` and `murgat run` folders, in one pass per file.

Only files are read (no model, no network). A folder is
- a *run* folder when it holds `run_summary.json` (or, without it, cell folders
  `<model>__<strategy>/scores.jsonl`): one cell per model x strategy, its numbers from the cell's
  `summary.json`, its generation rows (`media.heard_audio`) from the cell's `responses.jsonl`;
- a *score* folder when it holds `scores.jsonl` and `summary.json`: one cell per model of
  `summary.json`'s `by_model` (strategy unknown: "-"), or one cell for the whole folder.

Each `scores.jsonl` is streamed once: per cell we keep the per-response MURGAT-S values (floats),
citation counters and the first `cap` records for the drill-down; nothing else per response.

Every file is read through `results` as its typed model (`Summary`, `RunSummary`, and in `scan`
`ScoreRecord`, `GenerationRecord`). What cannot be read (a hand-edited file, a cut line, a number
that is text) never stops the report: it becomes a note on its source (`Source.notes`, shown at
the top of the page) naming the file, the line where there is one, and the fields at fault, and
reads as missing: a summary.json that is not a valid summary gives no numbers, a line that is
not a valid record is not drawn.
A valid value that cannot be drawn (a number that is not finite) is noted where it is shown.
"""

from __future__ import annotations

import math
import os
import pathlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..results import (
    GenerationRecord,
    Numbers,
    ReadError,
    RunSummary,
    ScoreRecord,
    Summary,
    layout,
    read_run_summary,
    read_summary,
)

MODALITIES = ("visual", "audio", "other")
# Citation problems, in the order the report shows them.
PROBLEMS = ("malformed", "out_of_range", "silent_audio", "no_stream", "unsupported")
PROBLEM_LABELS = {
    "malformed": "malformed",
    "out_of_range": "out of range",
    "silent_audio": "audio on a silent video",
    "no_stream": "no such stream",
    "unsupported": "unsupported",
}
METRICS = ("qa_accuracy", "coverage", "precision", "recall", "f1", "murgat_s")


class ReportInputError(Exception):
    """A folder that is not a `murgat score` or `murgat run` output (a usage error)."""


@dataclass
class Cell:
    run: str  # the input folder, as given
    run_name: str  # the shortest trailing part of its path that no other input shares
    model: str
    strategy: str
    summary: Numbers  # the numbers: summary.json, or its by_model entry (empty: unknown)
    summary_path: pathlib.Path
    summary_key: tuple[str, ...]  # where `summary` is inside summary.json: () or ("by_model", m)
    judges: dict[str, str] = field(default_factory=dict)  # stage -> judge model
    label: str = ""
    in_table: bool = True  # False: records the summary attributes to no model
    cap: int = 0  # how many records the drill-down keeps
    murgat_s: list[float] = field(default_factory=list)
    citations: Counter = field(default_factory=Counter)  # (modality, verdict) -> n
    hallucinated_audio: int = 0  # audio citations in responses whose responder heard no audio
    deaf_responses: int = 0  # responses whose responder heard no audio
    hallucinated_visual: int = 0  # visual citations in responses whose responder saw no picture
    blind_responses: int = 0  # responses whose responder saw no picture (an audio-only model)
    heard_known: bool = False  # generation rows were found
    records: int = 0
    # drill-down: each record kept, with its generation row when one was found
    shown: list[tuple[ScoreRecord, GenerationRecord | None]] = field(default_factory=list)


@dataclass
class Source:
    """One scores.jsonl with its summary.json (its stages) and the cells it feeds."""

    run: str  # the input folder, as given
    run_name: str
    scores: pathlib.Path
    summary: Summary | None  # None: its summary.json cannot be read (a note says why)
    responses: pathlib.Path | None
    cells: dict[str, Cell]  # by the records' `model` ("*" when one cell takes all)
    unreadable: int = 0  # lines of `scores` that are not valid records
    notes: list[str] = field(default_factory=list)  # what in its files could not be read or drawn

    def cell_for(self, record: ScoreRecord) -> Cell:
        cell = self.cells.get("*") or self.cells.get(str(record.model))
        if cell is None:  # e.g. an item that erred before its model was read
            cell = self.cells.get("\0")
            if cell is None:
                first = next(iter(self.cells.values()))
                cell = self.cells["\0"] = Cell(
                    first.run,
                    first.run_name,
                    "(no model)",
                    "-",
                    Numbers(),
                    first.summary_path,
                    (),
                    judges=first.judges,
                    in_table=False,
                    heard_known=first.heard_known,
                    cap=first.cap,
                )
        return cell


# ------------------------------------------------------------------ checking values


def finite(v) -> float | None:
    """A JSON number as a float, or None for anything else (text, true/false, NaN, infinity, an
    integer too large for a float)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def interval(v) -> tuple[float, float] | None:
    """A recorded [low, high] interval of finite numbers, or None."""
    if isinstance(v, list) and len(v) == 2:
        low, high = finite(v[0]), finite(v[1])
        if low is not None and high is not None and low <= high:
            return low, high
    return None


def what(v) -> str:
    """A short description of a JSON value for a note: what was found where something else was due."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the value {str(v).lower()}"
    if isinstance(v, float) and not math.isfinite(v):
        return f"the value {v!r}"
    if isinstance(v, (int, float)):
        r = repr(v) if not isinstance(v, int) or abs(v) < 10**30 else f"{str(v)[:20]}…"
        return f"the number {r}"
    if isinstance(v, str):
        return f"the text {(v if len(v) <= 40 else v[:39] + '…')!r}"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def expect(notes: list[str], where: str, v, ok, want: str) -> bool:
    """True when `v` is absent (None) or `ok(v)`; else a note that `where` is not `want`."""
    if v is None or ok(v):
        return True
    notes.append(f"{where} is {what(v)}, not {want}")
    return False


def metric(summary: Numbers, name: str) -> Any:
    """A number the table and plots read (one of `METRICS`, its `_ci`, or a count) by its name:
    each is a field of `results.Summary`."""
    return getattr(summary, name)


def check_numbers(summary: Numbers, prefix: str, notes: list[str]) -> Numbers:
    """`summary` (or one by_model entry), after a note, each named `prefix` + key, on every number
    the table and plots read from it that a valid summary may hold but cannot be drawn (not
    finite, an interval that is not [low, high], a negative count)."""
    for m in METRICS:
        v, ci = metric(summary, m), metric(summary, f"{m}_ci")
        if v is not None and finite(v) is None:
            notes.append(f"{prefix}{m} is {what(v)}, not a finite number")
        if ci is not None and interval(ci) is None:
            notes.append(f"{prefix}{m}_ci is {what(ci)}, not an interval [low, high]")
    for key in ("responses", "scored", "errors"):
        n = metric(summary, key)
        if n is not None and n < 0:
            notes.append(f"{prefix}{key} is {what(n)}, not a count")
    return summary


def _check_stages(summary: Summary, notes: list[str]) -> None:
    # the four counters the report draws: valid, yet an integer too large for a float is no
    # number to draw
    for name, counters in (summary.stages or {}).items():
        for key in ("calls", "cache_hits", "model_calls", "wall_s"):
            expect(
                notes,
                f"stages.{name}.{key}",
                getattr(counters, key),
                lambda v: finite(v) is not None,
                "a number",
            )


def judges_of(summary: Summary) -> dict[str, str]:
    """Stage -> judge model, from summary.json's `models` (else its provenance's `judges`)."""
    if summary.models is not None:
        return {str(stage): model for stage, model in summary.models.items() if model}
    judges = summary.provenance.judges if summary.provenance is not None else None
    return {str(stage): j.model for stage, j in (judges or {}).items() if j.model}


def _summary(path: pathlib.Path, notes: list[str]) -> tuple[Summary | None, dict[str, str]]:
    """A summary.json read through `results.read_summary`: (it, its judges per stage), or (None,
    {}) with a note saying why it cannot be read; notes say what cannot be drawn."""
    summary = read_summary(path)
    if isinstance(summary, ReadError):
        notes.append(f"{summary}: its numbers are unknown")
        return None, {}
    found: list[str] = []
    judges = judges_of(summary)
    _check_stages(summary, found)
    notes.extend(f"{path}: {n}" for n in found)
    return summary, judges


# ------------------------------------------------------------------ folders


def _score_folder(folder: pathlib.Path, run: str, name: str) -> Source:
    notes: list[str] = []
    summary_path = folder / layout.SUMMARY
    summary, judges = _summary(summary_path, notes)
    cells: dict[str, Cell] = {}
    by_model = (summary.by_model if summary is not None else None) or {}
    for m, entry in by_model.items():
        numbers = check_numbers(entry, f"{summary_path}: by_model.{m}.", notes)
        key = ("by_model", str(m))
        cells[str(m)] = Cell(run, name, str(m), "-", numbers, summary_path, key, judges=judges)
    if not cells:
        numbers = check_numbers(summary or Summary(), f"{summary_path}: ", notes)
        cells["*"] = Cell(run, name, "-", "-", numbers, summary_path, (), judges=judges)
    return Source(run, name, folder / layout.SCORES, summary, None, cells, notes=notes)


def _cell_folders(folder: pathlib.Path, notes: list[str]) -> list[tuple[str, pathlib.Path]]:
    """(label, folder) of each cell of a run folder, in run_summary.json's order."""
    rs = folder / layout.RUN_SUMMARY
    found: list[tuple[str, pathlib.Path]] = []
    if rs.is_file():
        run_summary = read_run_summary(rs)
        if isinstance(run_summary, ReadError):
            notes.append(f"{run_summary}: cells are found by folder name")
        grid = (run_summary.grid if isinstance(run_summary, RunSummary) else None) or {}
        for label, entry in grid.items():
            model, strategy = entry.model, entry.strategy
            if model is None or strategy is None:
                model, _, strategy = label.partition("/")
            here = folder / layout.cell_folder(model, strategy)
            if not model or not strategy or model in (".", ".."):
                notes.append(f"{rs}: cell {label!r} is not a folder inside {folder}: left out")
                continue
            scores = entry.scores
            if not (here / layout.SCORES).is_file() and scores is not None:
                # the folder moved: the recorded path is used only when it is not there
                alt = pathlib.Path(scores).parent
                here = alt if (alt / layout.SCORES).is_file() else here
            found.append((label, here))
    if not found:
        for sub in sorted(folder.iterdir()):
            cell = layout.parse_cell_folder(sub.name)
            if cell is not None and (sub / layout.SCORES).is_file():
                found.append((layout.cell_label(*cell), sub))
    return found


def load_folder(folder: pathlib.Path, name: str | None = None) -> list[Source]:
    run, name = str(folder), name or folder.name
    if not folder.is_dir():
        raise ReportInputError(f"{folder} is not a folder")
    if layout.is_score_folder(folder):
        return [_score_folder(folder, run, name)]
    notes: list[str] = []  # on the run folder itself: kept on its first cell's source
    sources = []
    for label, cell_dir in _cell_folders(folder, notes):
        if not (cell_dir / layout.SCORES).is_file():
            notes.append(f"{folder}: cell {label!r} has no scores.jsonl in {cell_dir}: left out")
            continue
        cell_notes: list[str] = []
        summary_path = cell_dir / layout.SUMMARY
        summary, judges = _summary(summary_path, cell_notes)
        numbers = check_numbers(summary or Summary(), f"{summary_path}: ", cell_notes)
        model, _, strategy = label.partition("/")
        cell = Cell(run, name, model, strategy or "-", numbers, summary_path, (), judges=judges)
        responses = cell_dir / layout.RESPONSES
        sources.append(
            Source(
                run,
                name,
                cell_dir / layout.SCORES,
                summary,
                responses if responses.is_file() else None,
                {"*": cell},
                notes=cell_notes,
            )
        )
    if not sources:
        raise ReportInputError(
            f"{folder} is neither a `murgat score` folder (scores.jsonl, summary.json) "
            "nor a `murgat run` folder (run_summary.json and its cells)"
            + "".join(f"; {n}" for n in notes)
        )
    sources[0].notes[:0] = notes
    return sources


def run_names(folders: list[pathlib.Path]) -> list[str]:
    """Each folder's name in the report: the fewest trailing path parts that no other folder's
    path ends with (`a/score`, `b/score`); the same folder given twice is `name (2)`."""
    paths = [pathlib.PurePath(os.path.abspath(f)).parts for f in folders]
    names = []
    for p in paths:
        others = [q for q in paths if q != p]
        k = 1
        while k < len(p) and any(q[-k:] == p[-k:] for q in others):
            k += 1
        names.append("/".join(p[-k:]).lstrip("/") or "/")
    seen: Counter[str] = Counter()
    for i, n in enumerate(names):
        seen[n] += 1
        if seen[n] > 1:
            names[i] = f"{n} ({seen[n]})"
    return names


# ------------------------------------------------------------------ per-citation verdicts
