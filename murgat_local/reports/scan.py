"""Scanning the records of a run folder once: per response, its MURGAT-S, its citations by
modality and verdict, what its responder heard, and the lines that could not be read (for
`murgat report`; the folders themselves are found and read by `rundata`).

Score records and generation rows are read through `results` (typed, one rule for every line):
a line that is not a valid record is listed among the source's notes with its file, its line and
why (the fields at fault), and the rest of the file is still read and drawn."""

from __future__ import annotations

import pathlib
from collections import Counter
from collections.abc import Sequence

from ..results import (
    GenerationRecord,
    ReadError,
    ScoreRecord,
    read_generation_records,
    read_score_records,
)
from ..results.records import CitationRecord, FactRecord, SentenceRecord
from .rundata import Cell, Source, finite, load_folder, run_names, what

# Unreadable lines listed one by one per file; past these, a count.
LISTED_LINES = 20


def modality_of(c: CitationRecord) -> str:
    return c.modality if c.modality in ("visual", "audio") else "other"


def citation_verdict(c: CitationRecord, index: int, facts: Sequence[FactRecord]) -> str:
    """'supported', 'unsupported', 'unjudged', or the problem that made it unusable."""
    if c.error or c.modality not in ("visual", "audio"):
        return "malformed"
    if c.issue:
        if "beyond the media's duration" in c.issue:
            return "out_of_range"
        if c.issue.startswith("audio citation on a video with no audio"):
            return "silent_audio"
        if "no video stream" in c.issue:
            return "no_stream"
        return "malformed"
    if c.usable is False:
        return "malformed"
    marks = [f.precise[index] for f in facts if f.precise is not None and index < len(f.precise)]
    if any(m is True for m in marks):
        return "supported"
    if marks and all(m is False for m in marks):
        return "unsupported"
    return "unjudged"


def sentences_of(record: ScoreRecord) -> list[SentenceRecord]:
    return (record.trace.sentences or []) if record.trace is not None else []


def _citations_of(record: ScoreRecord, generation: GenerationRecord | None, modality: str) -> int:
    sents = sentences_of(record)
    if sents:
        return sum(modality_of(c) == modality for s in sents for c in s.citations or ())
    text = generation.model_generation if generation is not None else None
    if text is None:
        return 0
    from ..text.citations import parse_citations

    return sum(c.modality == modality for c in parse_citations(text))


class _RowNotes:
    """Notes on one JSONL file's rows: the first of each kind with its row number, then a count."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self.first: dict[str, str] = {}
        self.more: Counter[str] = Counter()

    def add(self, kind: str, row: int, note: str) -> None:
        if kind in self.first:
            self.more[kind] += 1
        else:
            self.first[kind] = f"{self.path}: row {row}: {note}"

    def notes(self) -> list[str]:
        return [
            n + (f" (and {self.more[k]} more rows like it)" if self.more[k] else "")
            for k, n in self.first.items()
        ]


class _Unreadable:
    """A records file's lines that could not be read: the first `LISTED_LINES` each with its
    line and why, then how many in all."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self.listed: list[str] = []
        self.count = 0

    def add(self, error: ReadError) -> None:
        self.count += 1
        if len(self.listed) < LISTED_LINES:
            self.listed.append(str(error))

    def notes(self) -> list[str]:
        if not self.count:
            return []
        s = "s" if self.count != 1 else ""
        more = self.count - len(self.listed)
        rest = f", {more} more not listed" if more else ""
        return [*self.listed, f"{self.path}: {self.count} unreadable line{s} skipped{rest}"]


def _generations(source: Source, keep: int) -> tuple[dict[str, tuple], dict[str, GenerationRecord]]:
    """From a cell's responses.jsonl: (heard_audio, saw_video) per response id (None where the
    row does not say), and the first `keep` rows."""
    heard: dict[str, tuple] = {}
    generations: dict[str, GenerationRecord] = {}
    responses = source.responses
    if responses is None:
        return heard, generations
    unreadable = _Unreadable(responses)
    for i, row in enumerate(read_generation_records(responses)):
        if isinstance(row, ReadError):
            if row.line is None:  # the file itself
                source.notes.append(str(row))
            else:
                unreadable.add(row)
            continue
        key = str(row.id) if "id" in row.model_fields_set else str(i)
        media = row.media
        heard[key] = (None, None) if media is None else (media.heard_audio, media.saw_video)
        if len(generations) < keep:
            generations[key] = row
    source.notes.extend(unreadable.notes())
    return heard, generations


def scan(source: Source, budget: list[int]) -> None:
    """One pass over the source's scores.jsonl (and its generation rows, in step); the
    drill-down keeps a record while its cell's cap and the shared `budget` ([n left]) allow.
    A file that cannot be read ends its own scan with a note."""
    heard: dict[str, tuple] = {}
    generations: dict[str, GenerationRecord] = {}
    if source.responses is not None:
        try:
            heard, generations = _generations(source, max(c.cap for c in source.cells.values()))
        except OSError as e:
            source.notes.append(f"{source.responses} cannot be read ({e.strerror or e})")
    for cell in source.cells.values():
        cell.heard_known = source.responses is not None
    rows = _RowNotes(source.scores)
    unreadable = _Unreadable(source.scores)
    try:
        _scan_scores(source, budget, heard, generations, rows, unreadable)
    except OSError as e:
        source.notes.append(
            f"{source.scores} cannot be read ({e.strerror or e}): only its first lines count"
        )
    source.notes.extend(rows.notes())
    source.notes.extend(unreadable.notes())
    source.unreadable = unreadable.count


def _scan_scores(
    source: Source,
    budget: list[int],
    heard: dict[str, tuple],
    generations: dict[str, GenerationRecord],
    rows: _RowNotes,
    unreadable: _Unreadable,
) -> None:
    for n, record in enumerate(read_score_records(source.scores), start=1):
        if isinstance(record, ReadError):
            if record.line is None:  # the file itself
                source.notes.append(str(record))
            else:
                unreadable.add(record)
            continue
        cell = source.cell_for(record)
        cell.records += 1
        ms = finite(record.murgat_s)
        if ms is not None and record.status == "ok":
            cell.murgat_s.append(ms)
        elif record.status == "ok" and record.murgat_s is not None:
            rows.add(
                "murgat_s",
                n,
                f"murgat_s is {what(record.murgat_s)}, not a finite number: "
                "left out of the distribution",
            )
        for s in sentences_of(record):
            facts = s.facts or []
            for i, c in enumerate(s.citations or ()):
                cell.citations[(modality_of(c), citation_verdict(c, i, facts))] += 1
        key = str(record.id)
        gen = generations.get(key)
        heard_audio, saw_video = heard.get(key, (None, None))
        if heard_audio is False:
            cell.deaf_responses += 1
            cell.hallucinated_audio += _citations_of(record, gen, "audio")
        if saw_video is False:
            cell.blind_responses += 1
            cell.hallucinated_visual += _citations_of(record, gen, "visual")
        if len(cell.shown) < cell.cap and budget[0] > 0:
            cell.shown.append((record, gen))
            budget[0] -= 1


def load(folders: list[pathlib.Path], max_responses: int) -> tuple[list[Cell], list[Source]]:
    """Every cell of every folder, scanned. The drill-down keeps `max_responses` records in all,
    split evenly over the cells (the first cells take the remainder); records attributed to no
    model (errors) keep as many as their source's first cell, within the same total."""
    sources = [s for f, name in zip(folders, run_names(folders)) for s in load_folder(f, name)]
    cells = [c for s in sources for c in s.cells.values()]
    for i, c in enumerate(cells):
        c.cap = max_responses // len(cells) + (1 if i < max_responses % len(cells) else 0)
    budget = [max_responses]
    for s in sources:
        scan(s, budget)
    cells = [c for s in sources for c in s.cells.values()]
    multi = len(folders) > 1
    for c in cells:
        # a row is named by its run when several runs are compared, or when it has no other name
        named = f"{c.model} / {c.strategy}" if (c.model, c.strategy) != ("-", "-") else ""
        c.label = (
            (f"{named} ({c.run_name})" if named else c.run_name) if multi or not named else named
        )
    return cells, sources
