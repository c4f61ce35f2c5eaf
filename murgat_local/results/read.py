"""The one reader of what murgat writes: score and generation records, summaries, comparisons.

One rule for every file: what cannot be read is a `ReadError` value naming the file and the
line, and the rest is still read. A records file is read line by line (memory does not grow with
it); a blank line is skipped. A line is an error when it is not JSON, not an object, of a
`schema_version` this murgat does not read (a newer one says so), or holds a key or a value
its schema does not allow (naming it). What a command does with an error is its own: `murgat
report` shows it as a note on its source, `rescore`, `compare` and `meta-eval` print each one
and exit 1 after their results (which cover the lines that were read).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

from . import layout
from .comparison import Comparison
from .records import GenerationRecord, ScoreRecord
from .summaries import GenerationSummary, MetaEval, RunSummary, Summary
from .versions import Versioned, validate, version_of

M = TypeVar("M", bound=Versioned)


@dataclass(frozen=True)
class ReadError:
    """A line or a file that could not be read, and why."""

    path: pathlib.Path
    line: int | None  # 1-based; None: the whole file
    reason: str

    def __str__(self) -> str:
        where = f"{self.path} line {self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


class _NotJson(str):
    """Why a text is not JSON (kept apart from a JSON string value)."""


def _parse(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        return _NotJson("not JSON (nested too deeply)")
    except ValueError as e:
        return _NotJson(f"not JSON ({e})")


def _objects(path: pathlib.Path) -> Iterator[tuple[int | None, dict | ReadError]]:
    """(line number, the line's JSON object or why it is not one) for each non-blank line."""
    try:
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        yield None, ReadError(path, None, f"cannot be read ({e.strerror or e})")
        return
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            data = _parse(line)
            if isinstance(data, _NotJson):
                yield lineno, ReadError(path, lineno, str(data))
            elif not isinstance(data, dict):
                why = f"not a JSON object (a JSON {type(data).__name__})"
                yield lineno, ReadError(path, lineno, why)
            elif isinstance(version := version_of(data), str):
                yield lineno, ReadError(path, lineno, version)
            else:
                yield lineno, data


def read_objects(path: pathlib.Path) -> Iterator[dict | ReadError]:
    """Each line of a records file as the JSON object it holds, no schema applied beyond its
    `schema_version` (a newer one is an error): for a reader that checks the values it shows one
    by one (the annotation page)."""
    return (data for _, data in _objects(pathlib.Path(path)))


def _numbered(
    path: pathlib.Path, model: type[M], what: str
) -> Iterator[tuple[int | None, M | ReadError]]:
    for lineno, data in _objects(path):
        if isinstance(data, ReadError):
            yield lineno, data
            continue
        got = validate(model, data, what)
        yield lineno, ReadError(path, lineno, got) if isinstance(got, str) else got


def _lines(path: pathlib.Path, model: type[M], what: str) -> Iterator[M | ReadError]:
    return (got for _, got in _numbered(path, model, what))


def read_score_records(path: pathlib.Path) -> Iterator[ScoreRecord | ReadError]:
    """Each line of a `scores.jsonl`, in order: its record, or the error that line is."""
    return _lines(pathlib.Path(path), ScoreRecord, "score record")


def read_score_lines(path: pathlib.Path) -> Iterator[tuple[int | None, ScoreRecord | ReadError]]:
    """`read_score_records` with each line's number (1-based; None: the whole file), for a
    reader that may refuse a record the schema accepts, naming its line."""
    return _numbered(pathlib.Path(path), ScoreRecord, "score record")


def read_generation_records(path: pathlib.Path) -> Iterator[GenerationRecord | ReadError]:
    """Each line of a cell's `responses.jsonl`, in order: its record, or the error it is."""
    return _lines(pathlib.Path(path), GenerationRecord, "generation record")


def read_json_object(path: pathlib.Path) -> dict | ReadError:
    """The JSON object a file holds, as written (no schema applied), or why it cannot be read."""
    path = pathlib.Path(path)
    if not path.is_file():
        return ReadError(path, None, "no such file")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        return ReadError(path, None, f"cannot be read ({e.strerror or e})")
    data = _parse(text)
    if isinstance(data, _NotJson):
        return ReadError(path, None, str(data))
    if not isinstance(data, dict):
        return ReadError(path, None, f"not a JSON object (a JSON {type(data).__name__})")
    return data


def _one(path: pathlib.Path, model: type[M], what: str) -> M | ReadError:
    data = read_json_object(path)
    if isinstance(data, ReadError):
        return data
    got = validate(model, data, what)
    return ReadError(pathlib.Path(path), None, got) if isinstance(got, str) else got


def read_summary(path: pathlib.Path) -> Summary | ReadError:
    """A `murgat score` summary.json, or why it cannot be read."""
    return _one(path, Summary, "summary")


def read_run_summary(path: pathlib.Path) -> RunSummary | ReadError:
    """A `murgat run` run_summary.json, or why it cannot be read."""
    return _one(path, RunSummary, "run summary")


def read_generation_summary(path: pathlib.Path) -> GenerationSummary | ReadError:
    """A `murgat generate` generation_summary.json (a folder: the one in it, or the summary.json
    that a generation before the file had its own name wrote there), or why it cannot be read."""
    path = pathlib.Path(path)
    if path.is_dir():
        named, old = path / layout.GENERATION_SUMMARY, path / layout.SUMMARY
        path = old if old.is_file() and not named.is_file() else named
    return _one(path, GenerationSummary, "generation summary")


def read_meta_eval(path: pathlib.Path) -> MetaEval | ReadError:
    """A `murgat meta-eval` meta_eval.json, or why it cannot be read."""
    return _one(path, MetaEval, "meta-eval report")


def read_comparison(path: pathlib.Path) -> Comparison | ReadError:
    """A `murgat compare --out` report, or why it cannot be read."""
    return _one(path, Comparison, "comparison report")
