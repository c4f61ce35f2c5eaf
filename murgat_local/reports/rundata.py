"""What `murgat report` reads: `murgat score` and `murgat run` folders, in one pass per file.

Only files are read (no model, no network). A folder is
- a *run* folder when it holds `run_summary.json` (or, without it, cell folders
  `<model>__<strategy>/scores.jsonl`): one cell per model x strategy, its numbers from the cell's
  `summary.json`, its generation rows (`media.heard_audio`) from the cell's `responses.jsonl`;
- a *score* folder when it holds `scores.jsonl` and `summary.json`: one cell per model of
  `summary.json`'s `by_model` (strategy unknown: "-"), or one cell for the whole folder.

Each `scores.jsonl` is streamed once: per cell we keep the per-response MURGAT-S values (floats),
citation counters and the first `cap` records for the drill-down; nothing else per response.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

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
    run: str                      # the input folder, as given
    model: str
    strategy: str
    summary: dict                 # the numbers: summary.json, or its by_model entry
    summary_path: pathlib.Path
    summary_key: tuple[str, ...]  # where `summary` is inside summary.json: () or ("by_model", m)
    label: str = ""
    in_table: bool = True         # False: records the summary attributes to no model
    cap: int = 0                  # how many records the drill-down keeps
    murgat_s: list[float] = field(default_factory=list)
    citations: Counter = field(default_factory=Counter)   # (modality, verdict) -> n
    hallucinated_audio: int = 0   # audio citations in responses whose responder heard no audio
    deaf_responses: int = 0       # responses whose responder heard no audio
    heard_known: bool = False     # generation rows were found
    records: int = 0
    shown: list[dict] = field(default_factory=list)  # drill-down: records (+ "_generation")


@dataclass
class Source:
    """One scores.jsonl with its summary.json (its stages) and the cells it feeds."""
    scores: pathlib.Path
    summary: dict
    responses: pathlib.Path | None
    cells: dict[str, Cell]        # by the records' `model` ("*" when one cell takes all)
    unreadable: int = 0

    def cell_for(self, record: dict) -> Cell:
        cell = self.cells.get("*") or self.cells.get(str(record.get("model")))
        if cell is None:  # e.g. an item that erred before its model was read
            cell = self.cells.get("\0")
            if cell is None:
                first = next(iter(self.cells.values()))
                cell = self.cells["\0"] = Cell(first.run, "(no model)", "-", {}, first.summary_path, (),
                                               in_table=False, heard_known=first.heard_known, cap=first.cap)
        return cell


def _load_json(path: pathlib.Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as e:
        raise ReportInputError(f"{path} cannot be read as JSON ({e})") from None
    if not isinstance(data, dict):
        raise ReportInputError(f"{path} is not a JSON object")
    return data


def iter_jsonl(path: pathlib.Path) -> Iterator[dict | None]:
    """Each line's object; None for a line that is not a JSON object (counted, never fatal)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                yield None
                continue
            yield obj if isinstance(obj, dict) else None


def _score_folder(folder: pathlib.Path, run: str) -> Source:
    summary_path = folder / "summary.json"
    if not summary_path.is_file():
        raise ReportInputError(f"{folder} has scores.jsonl but no summary.json")
    summary = _load_json(summary_path)
    by_model = summary.get("by_model")
    cells: dict[str, Cell] = {}
    if isinstance(by_model, dict) and by_model:
        for m, numbers in by_model.items():
            if isinstance(numbers, dict):
                cells[str(m)] = Cell(run, str(m), "-", numbers, summary_path, ("by_model", str(m)))
    if not cells:
        cells["*"] = Cell(run, "-", "-", summary, summary_path, ())
    return Source(folder / "scores.jsonl", summary, None, cells)


def _cell_folders(folder: pathlib.Path) -> list[tuple[str, pathlib.Path]]:
    """(label, folder) of each cell of a run folder, in run_summary.json's order."""
    rs = folder / "run_summary.json"
    found: list[tuple[str, pathlib.Path]] = []
    if rs.is_file():
        grid = _load_json(rs).get("grid") or {}
        for label in grid if isinstance(grid, dict) else ():
            label = str(label)
            here = folder / label.replace("/", "__")
            if here.parent != folder or here.name in ("", ".", ".."):
                raise ReportInputError(f"{rs}: cell name {label!r} is not a folder inside {folder}")
            entry = grid[label] if isinstance(grid[label], dict) else {}
            if not (here / "scores.jsonl").is_file() and isinstance(entry.get("scores"), str):
                # the folder moved: the recorded path is used only when it is not there
                alt = pathlib.Path(entry["scores"]).parent
                here = alt if (alt / "scores.jsonl").is_file() else here
            found.append((label, here))
    if not found:
        for sub in sorted(folder.iterdir()):
            if "__" in sub.name and (sub / "scores.jsonl").is_file():
                found.append((sub.name.replace("__", "/", 1), sub))
    return found


def load_folder(folder: pathlib.Path) -> list[Source]:
    run = str(folder)
    if not folder.is_dir():
        raise ReportInputError(f"{folder} is not a folder")
    if (folder / "scores.jsonl").is_file() and not (folder / "run_summary.json").is_file():
        return [_score_folder(folder, run)]
    sources = []
    for label, cell_dir in _cell_folders(folder):
        if not (cell_dir / "scores.jsonl").is_file() or not (cell_dir / "summary.json").is_file():
            raise ReportInputError(f"cell {label} of {folder} has no scores.jsonl/summary.json in {cell_dir}")
        summary = _load_json(cell_dir / "summary.json")
        model, _, strategy = label.partition("/")
        cell = Cell(run, model, strategy or "-", summary, cell_dir / "summary.json", ())
        responses = cell_dir / "responses.jsonl"
        sources.append(Source(cell_dir / "scores.jsonl", summary,
                              responses if responses.is_file() else None, {"*": cell}))
    if not sources:
        raise ReportInputError(f"{folder} is neither a `murgat score` folder (scores.jsonl, summary.json) "
                               "nor a `murgat run` folder (run_summary.json and its cells)")
    return sources


# ------------------------------------------------------------------ per-citation verdicts


def modality_of(c: dict) -> str:
    m = c.get("modality")
    return m if m in ("visual", "audio") else "other"


def citation_verdict(c: dict, index: int, facts: list) -> str:
    """'supported', 'unsupported', 'unjudged', or the problem that made it unusable."""
    issue = c.get("issue")
    if c.get("error") or c.get("modality") not in ("visual", "audio"):
        return "malformed"
    if issue:
        issue = str(issue)
        if "beyond the media's duration" in issue:
            return "out_of_range"
        if issue.startswith("audio citation on a video with no audio"):
            return "silent_audio"
        if "no video stream" in issue:
            return "no_stream"
        return "malformed"
    if c.get("usable") is False:
        return "malformed"
    marks = []
    for f in facts or ():
        precise = f.get("precise") if isinstance(f, dict) else None
        if isinstance(precise, list) and index < len(precise):
            marks.append(precise[index])
    if any(m is True for m in marks):
        return "supported"
    if marks and all(m is False for m in marks):
        return "unsupported"
    return "unjudged"


def sentences_of(record: dict) -> list[dict]:
    trace = record.get("trace")
    sents = trace.get("sentences") if isinstance(trace, dict) else None
    return [s for s in sents if isinstance(s, dict)] if isinstance(sents, list) else []


def citations_of(sentence: dict) -> list[dict]:
    cits = sentence.get("citations")
    return [c if isinstance(c, dict) else {} for c in cits] if isinstance(cits, list) else []


def _audio_citations(record: dict, generation: dict | None) -> int:
    sents = sentences_of(record)
    if sents:
        return sum(modality_of(c) == "audio" for s in sents for c in citations_of(s))
    text = (generation or {}).get("model_generation") or record.get("model_generation")
    if not isinstance(text, str):
        return 0
    from ..text.citations import parse_citations
    return sum(c.modality == "audio" for c in parse_citations(text))


def _finite(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def scan(source: Source, budget: list[int]) -> None:
    """One pass over the source's scores.jsonl (and its generation rows, in step); the
    drill-down keeps a record while its cell's cap and the shared `budget` ([n left]) allow."""
    heard: dict[str, bool | None] = {}
    generations: dict[str, dict] = {}
    if source.responses is not None:
        for i, row in enumerate(iter_jsonl(source.responses)):
            if row is None:
                continue
            key = str(row.get("id", i))
            media = row.get("media") if isinstance(row.get("media"), dict) else {}
            h = media.get("heard_audio")
            heard[key] = h if isinstance(h, bool) else None
            if len(generations) < max(c.cap for c in source.cells.values()):
                generations[key] = {k: row.get(k) for k in ("question", "options", "gold", "predicted",
                                                            "correct", "model_generation", "media")}
    for cell in source.cells.values():
        cell.heard_known = source.responses is not None
    for record in iter_jsonl(source.scores):
        if record is None:
            source.unreadable += 1
            continue
        cell = source.cell_for(record)
        cell.records += 1
        ms = _finite(record.get("murgat_s"))
        if ms is not None and record.get("status") == "ok":
            cell.murgat_s.append(ms)
        for s in sentences_of(record):
            facts = s.get("facts") if isinstance(s.get("facts"), list) else []
            for i, c in enumerate(citations_of(s)):
                cell.citations[(modality_of(c), citation_verdict(c, i, facts))] += 1
        key = str(record.get("id"))
        gen = generations.get(key)
        if heard.get(key) is False:
            cell.deaf_responses += 1
            cell.hallucinated_audio += _audio_citations(record, gen)
        if len(cell.shown) < cell.cap and budget[0] > 0:
            cell.shown.append({**record, "_generation": gen})
            budget[0] -= 1


def load(folders: list[pathlib.Path], max_responses: int) -> tuple[list[Cell], list[Source]]:
    """Every cell of every folder, scanned. The drill-down keeps `max_responses` records in all,
    split evenly over the cells (the first cells take the remainder); records attributed to no
    model (errors) keep as many as their source's first cell, within the same total."""
    sources = [s for f in folders for s in load_folder(f)]
    cells = [c for s in sources for c in s.cells.values()]
    for i, c in enumerate(cells):
        c.cap = max_responses // len(cells) + (1 if i < max_responses % len(cells) else 0)
    budget = [max_responses]
    for s in sources:
        scan(s, budget)
    cells = [c for s in sources for c in s.cells.values()]
    multi = len(folders) > 1
    for c in cells:
        c.label = f"{c.model} / {c.strategy}" + (f" ({pathlib.Path(c.run).name})" if multi else "")
    return cells, sources
