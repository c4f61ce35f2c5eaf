"""Scanning the records of a run folder once: per response, its MURGAT-S, its citations by
modality and verdict, what its responder heard, and the notes on values that could not be read
(for `murgat report`; the folders themselves are found and read by `rundata`)."""

from __future__ import annotations

import pathlib
from collections import Counter

from ..results import ReadError, read_objects
from .rundata import Cell, Source, finite, load_folder, run_names, what


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


def _citations_of(record: dict, generation: dict | None, modality: str) -> int:
    sents = sentences_of(record)
    if sents:
        return sum(modality_of(c) == modality for s in sents for c in citations_of(s))
    text = (generation or {}).get("model_generation") or record.get("model_generation")
    if not isinstance(text, str):
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


def _unreadable(path: pathlib.Path, n: int) -> str:
    return f"{path}: {n} unreadable line{'s' if n != 1 else ''} (not a JSON object) skipped"


def _generations(source: Source, keep: int) -> tuple[dict[str, tuple], dict[str, dict]]:
    """From a cell's responses.jsonl: (heard_audio, saw_video) per response id (None where the
    row does not say), and the first `keep` rows."""
    heard: dict[str, tuple] = {}
    generations: dict[str, dict] = {}
    responses = source.responses
    if responses is None:
        return heard, generations
    rows, unreadable = _RowNotes(responses), 0
    for i, row in enumerate(read_objects(responses)):
        if isinstance(row, ReadError):
            if row.line is None:  # the file itself
                source.notes.append(str(row))
            unreadable += row.line is not None
            continue
        key = str(row.get("id", i))
        media = row.get("media")
        if media is not None and not isinstance(media, dict):
            rows.add("media", i + 1, f"media is {what(media)}, not an object: heard_audio unknown")
        h = media.get("heard_audio") if isinstance(media, dict) else None
        v = media.get("saw_video") if isinstance(media, dict) else None
        heard[key] = (h if isinstance(h, bool) else None, v if isinstance(v, bool) else None)
        if len(generations) < keep:
            generations[key] = {
                k: row.get(k)
                for k in (
                    "question",
                    "options",
                    "gold",
                    "predicted",
                    "correct",
                    "model_generation",
                    "media",
                )
            }
    source.notes.extend(rows.notes())
    if unreadable:
        source.notes.append(_unreadable(responses, unreadable))
    return heard, generations


def scan(source: Source, budget: list[int]) -> None:
    """One pass over the source's scores.jsonl (and its generation rows, in step); the
    drill-down keeps a record while its cell's cap and the shared `budget` ([n left]) allow.
    A file that cannot be read ends its own scan with a note."""
    heard: dict[str, tuple] = {}
    generations: dict[str, dict] = {}
    if source.responses is not None:
        try:
            heard, generations = _generations(source, max(c.cap for c in source.cells.values()))
        except OSError as e:
            source.notes.append(f"{source.responses} cannot be read ({e.strerror or e})")
    for cell in source.cells.values():
        cell.heard_known = source.responses is not None
    rows = _RowNotes(source.scores)
    try:
        _scan_scores(source, budget, heard, generations, rows)
    except OSError as e:
        source.notes.append(
            f"{source.scores} cannot be read ({e.strerror or e}): only its first lines count"
        )
    source.notes.extend(rows.notes())
    if source.unreadable:
        source.notes.append(_unreadable(source.scores, source.unreadable))


def _scan_scores(
    source: Source, budget: list[int], heard: dict, generations: dict, rows: _RowNotes
) -> None:
    for n, record in enumerate(read_objects(source.scores), start=1):
        if isinstance(record, ReadError):
            if record.line is None:  # the file itself
                source.notes.append(str(record))
            source.unreadable += record.line is not None
            continue
        cell = source.cell_for(record)
        cell.records += 1
        ms = finite(record.get("murgat_s"))
        if ms is not None and record.get("status") == "ok":
            cell.murgat_s.append(ms)
        elif record.get("status") == "ok" and record.get("murgat_s") is not None:
            rows.add(
                "murgat_s",
                n,
                f"murgat_s is {what(record.get('murgat_s'))}, not a number: "
                "left out of the distribution",
            )
        for s in sentences_of(record):
            listed = s.get("facts")
            facts = listed if isinstance(listed, list) else []
            for i, c in enumerate(citations_of(s)):
                cell.citations[(modality_of(c), citation_verdict(c, i, facts))] += 1
        key = str(record.get("id"))
        gen = generations.get(key)
        heard_audio, saw_video = heard.get(key, (None, None))
        if heard_audio is False:
            cell.deaf_responses += 1
            cell.hallucinated_audio += _citations_of(record, gen, "audio")
        if saw_video is False:
            cell.blind_responses += 1
            cell.hallucinated_visual += _citations_of(record, gen, "visual")
        if len(cell.shown) < cell.cap and budget[0] > 0:
            cell.shown.append({**record, "_generation": gen})
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
