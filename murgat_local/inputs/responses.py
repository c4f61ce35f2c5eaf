"""Reading the responses to score: JSONL (one per line) or the MURGAT reference's JSON list.

Reading never stops at a bad item: each one becomes an `InputError` at its position, with its
line number for JSONL, and the rest are read. JSONL is streamed, so memory does not grow with
the file.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field
from typing import Iterator, Union

GENERATION_FIELDS = ("model_generation", "original_full_generation")


@dataclass(frozen=True)
class ResponseItem:
    index: int  # position in the input, 0-based
    id: str
    video: str
    generation: str
    question: str | None = None
    options: object = None
    answer: str | None = None
    model: str | None = None
    source: str = ""  # "line 12" or "item 3"
    record: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class InputError:
    index: int
    id: str | None
    source: str
    reason: str


ReadItem = Union[ResponseItem, InputError]


def _item(index: int, source: str, obj: object, seen: set[str]) -> ReadItem:
    if not isinstance(obj, dict):
        return InputError(index, None, source, f"expected a JSON object, got {type(obj).__name__}")
    rid = obj.get("id")
    if rid is None or (isinstance(rid, str) and not rid.strip()):
        return InputError(index, None, source, "missing field 'id'")
    rid = str(rid)
    if rid in seen:
        return InputError(index, rid, source, f"duplicate id {rid!r} (first occurrence kept)")
    seen.add(rid)
    generation = next((obj[f] for f in GENERATION_FIELDS if obj.get(f)), None)
    if generation is None:
        present = [f for f in GENERATION_FIELDS if f in obj]
        why = "is empty" if present else "is missing"
        return InputError(index, rid, source, f"field 'model_generation' {why}")
    if not isinstance(generation, str):
        return InputError(index, rid, source, "field 'model_generation' is not a string")
    if not generation.strip():
        return InputError(index, rid, source, "empty response")
    video = obj.get("video")
    if not isinstance(video, str) or not video.strip():
        return InputError(index, rid, source, "missing field 'video'")
    answer = obj.get("answer")
    return ResponseItem(
        index=index,
        id=rid,
        video=video.strip(),
        generation=generation,
        question=obj.get("question"),
        options=obj.get("options"),
        answer=str(answer).strip() if answer is not None else None,
        model=obj.get("model"),
        source=source,
        record=obj,
    )


def _first_char(path: pathlib.Path) -> str:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        while True:
            ch = fh.read(1)
            if not ch or not ch.isspace():
                return ch


@dataclass(frozen=True)
class Unparsed:
    """A record that could not be read; `reason` says why."""

    reason: str


def iter_records(path: pathlib.Path) -> Iterator[tuple[int, str, object]]:
    """(index, source, parsed object or `Unparsed`) for every record of a JSONL or JSON-list file."""
    if _first_char(path) == "[":
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            yield 0, f"line {e.lineno}", Unparsed(f"the JSON list does not parse: {e.msg}")
            return
        for i, obj in enumerate(items):
            yield i, f"item {i}", obj
        return
    index = 0
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                obj = Unparsed(f"malformed JSON on line {lineno}: {e.msg} (column {e.colno})")
            yield index, f"line {lineno}", obj
            index += 1


def read_responses(path: str | pathlib.Path, limit: int | None = None) -> Iterator[ReadItem]:
    """Every response in input order, valid or not."""
    path = pathlib.Path(path)
    seen: set[str] = set()
    for index, source, obj in iter_records(path):
        if limit is not None and index >= limit:
            return
        if isinstance(obj, Unparsed):
            yield InputError(index, None, source, obj.reason)
        else:
            yield _item(index, source, obj, seen)
