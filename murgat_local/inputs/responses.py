"""Reading the responses to score: JSONL (one per line) or the MURGAT reference's JSON list.

Reading never stops at a bad item: each one becomes an `InputError` at its position, with its
line number for JSONL, and the rest are read. JSONL is streamed, so memory does not grow with
the file.

Text that is not valid Unicode is repaired here, once, so that nothing downstream (prompts,
cache keys, records, terminals) meets it: bytes that are not UTF-8 become U+FFFD as Python's
`errors="replace"` decodes them (one per maximal invalid sequence), a lone UTF-16 surrogate
(JSON such as `"\\ud83d"` without its pair) becomes U+FFFD, in keys and values alike, and the
item's source says how many characters were replaced (`line 3 (2 characters not valid Unicode
replaced by U+FFFD)`). A surrogate pair written as two escapes is the one character it encodes.
Every other character, NUL, control and bidi characters included, is kept as written. A UTF-8
byte-order mark at the start of the file is dropped; a UTF-16 file is one error, not a line of
garbage per line. A field of the wrong type is the item's error, naming the field and the type.
docs/security.md, "## Bad input", lists every kind of bad input and what it gets.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .jsontext import Malformed, Unparsed, entries, parse
from .limits import DEFAULT_LIMITS, InputLimits, oversize

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


# What a row `murgat generate` wrote says of its answer (it graded it) and of its question (the
# labels `--group-by` reads): kept on the row's error, so that a response that cannot be scored
# is still graded as generate graded it, in its groups.
KEPT_FIELDS = (
    "status",
    "answer_path",
    "predicted",
    "answer",
    "question_type",
    "benchmark",
    "categories",
)


@dataclass(frozen=True)
class InputError:
    index: int
    id: str | None
    source: str
    reason: str
    # A generated row's `KEPT_FIELDS` (empty for any other row).
    row: dict = field(default_factory=dict, compare=False, repr=False)


def kept_fields(obj: object) -> dict:
    """A generated row's `KEPT_FIELDS` that are short and of their kind (a row over the size
    limits keeps none of its large values); empty for a row murgat generate did not write."""
    if not isinstance(obj, dict) or "answer_path" not in obj:
        return {}
    kept: dict = {}
    for k in KEPT_FIELDS:
        v = obj.get(k)
        if k not in obj:
            continue
        if k == "categories":  # an object of texts or lists of texts, as `--group-by` reads
            if isinstance(v, dict) and _short(v) and _wrong_labels({k: v}) is None:
                kept[k] = v
        elif v is None or isinstance(v, str) and len(v) <= 1000:
            kept[k] = v
    if _wrong_labels({"question_type": kept.get("question_type")}) is not None:
        del kept["question_type"]
    return kept


def _short(v: object, most: int = 1000) -> bool:
    """Whether `v` is null, a short text, or a small object or list of them."""
    if v is None:
        return True
    if isinstance(v, str):
        return len(v) <= most
    if isinstance(v, list):
        return len(v) <= 50 and all(_short(x) for x in v)
    if isinstance(v, dict):
        return len(v) <= 50 and all(_short(k) and _short(x) for k, x in v.items())
    return False


ReadItem = ResponseItem | InputError


def _item(index: int, source: str, obj: object, seen: set[str]) -> ReadItem:
    if not isinstance(obj, dict):
        return InputError(index, None, source, f"expected a JSON object, got {type(obj).__name__}")
    rid = obj.get("id")
    if rid is None or (isinstance(rid, str) and not rid.strip()):
        return InputError(index, None, source, "missing field 'id'")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return InputError(
            index,
            None,
            source,
            f"field 'id' must be a string or an integer, not {type(rid).__name__}",
        )
    rid = str(rid)
    if rid in seen:
        return InputError(index, rid, source, f"duplicate id {rid!r} (first occurrence kept)")
    seen.add(rid)
    item = _read_item(index, rid, source, obj)
    if isinstance(item, InputError):  # a generated row's answer is graded all the same
        return dataclasses.replace(item, row=kept_fields(obj))
    return item


def _read_item(index: int, rid: str, source: str, obj: dict) -> ReadItem:
    # The first generation field that holds something; "" or null falls back to the next one.
    generation = next((obj[f] for f in GENERATION_FIELDS if obj.get(f) not in (None, "")), None)
    if generation is None:
        present = [f for f in GENERATION_FIELDS if f in obj]
        why = "is empty" if present else "is missing"
        return InputError(index, rid, source, f"field 'model_generation' {why}")
    if not isinstance(generation, str):
        return InputError(
            index,
            rid,
            source,
            f"field 'model_generation' is not a string ({type(generation).__name__})",
        )
    if not generation.strip():
        return InputError(index, rid, source, "empty response")
    video = obj.get("video")
    if video is None or (isinstance(video, str) and not video.strip()):
        return InputError(index, rid, source, "missing field 'video'")
    if not isinstance(video, str):
        return InputError(
            index, rid, source, f"field 'video' is not a string ({type(video).__name__})"
        )
    answer = obj.get("answer")
    wrong = (
        _wrong_type(obj, ("question", "model", "benchmark"), str)
        or _wrong_type(obj, ("answer",), (str, int))
        or _wrong_labels(obj)
    )
    if wrong:
        return InputError(index, rid, source, wrong)
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


def _wrong_type(obj: dict, fields: tuple[str, ...], types) -> str | None:
    """Why an optional field present in `obj` (not null) has a type other than `types`."""
    for name in fields:
        value = obj.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, types)):
            what = "a string" if types is str else "a string or an integer"
            return f"field {name!r} is not {what} ({type(value).__name__})"
    return None


QUESTION_TYPES = ("multiple-choice", "open")


def _wrong_labels(obj: dict) -> str | None:
    """Why `question_type` or `categories` (an object whose values are strings or lists of
    strings: the groups of `--group-by`) is not what it must be."""
    kind = obj.get("question_type")
    if kind is not None and kind not in QUESTION_TYPES:
        return f"field 'question_type' must be 'multiple-choice' or 'open', not {kind!r}"
    categories = obj.get("categories")
    if categories is None:
        return None
    if not isinstance(categories, dict):
        return f"field 'categories' is not an object ({type(categories).__name__})"
    for name, value in categories.items():
        values = value if isinstance(value, list) else [value]
        bad = next((v for v in values if v is not None and not isinstance(v, str)), None)
        if bad is not None:
            return f"field 'categories' entry {name!r} is not a string or a list of strings ({type(bad).__name__})"
    return None


def _first_char(path: pathlib.Path) -> str:
    with path.open("r", encoding="utf-8-sig", errors="replace") as fh:
        while True:
            ch = fh.read(1)
            if not ch or not ch.isspace():
                return ch


_SURROGATE = re.compile("[\ud800-\udfff]")
# Bytes that are not UTF-8, as `errors="surrogateescape"` reads them.
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")
# What JSON text must hold for its value to hold a surrogate: one, or an escape of one.
_MAY_HOLD_SURROGATE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


def replace_surrogates(text: str) -> tuple[str, int]:
    """`text` with every surrogate code point (a lone UTF-16 half, or a byte that was not UTF-8
    read with `surrogateescape`) replaced by U+FFFD, and how many were replaced."""
    return _SURROGATE.subn("\ufffd", text)


def _undo_escaped_bytes(text: str) -> tuple[str, int]:
    """Bytes read with `surrogateescape` decoded as `errors="replace"` would have decoded them,
    and how many U+FFFD that made."""
    if not _ESCAPED_BYTES.search(text):
        return text, 0
    fixed = _ESCAPED_BYTES.sub(
        lambda m: m.group().encode("utf-8", "surrogateescape").decode("utf-8", "replace"), text
    )
    return fixed, fixed.count("\ufffd") - text.count("\ufffd")


def _parsed(line: str) -> tuple[object, int]:
    """The value of a line read with `surrogateescape` (or `Unparsed`), repaired (see the module
    doc), and how many characters were replaced."""
    line, from_bytes = _undo_escaped_bytes(line)
    obj = parse(line)
    if isinstance(obj, Unparsed) or not _MAY_HOLD_SURROGATE.search(line):
        return obj, from_bytes
    obj, lone = _repaired(obj)
    return obj, from_bytes + lone


def _repaired(obj: object, escaped_bytes: bool = False) -> tuple[object, int]:
    """A parsed JSON value with `replace_surrogates` applied to every key and string in it
    (after `_undo_escaped_bytes` when it was parsed from text read with `surrogateescape`)."""
    if isinstance(obj, str):
        obj, from_bytes = _undo_escaped_bytes(obj) if escaped_bytes else (obj, 0)
        obj, lone = replace_surrogates(obj)
        return obj, from_bytes + lone
    if isinstance(obj, list):
        total = 0
        items = []
        for v in obj:
            v, n = _repaired(v, escaped_bytes)
            items.append(v)
            total += n
        return items, total
    if isinstance(obj, dict):
        total = 0
        fixed = {}
        for k, v in obj.items():
            k, m = _repaired(k, escaped_bytes)
            v, n = _repaired(v, escaped_bytes)
            fixed[k] = v
            total += m + n
        return fixed, total
    return obj, 0


def _with_repairs(source: str, replaced: int) -> str:
    if not replaced:
        return source
    return f"{source} ({replaced} character{'s' if replaced > 1 else ''} not valid Unicode replaced by U+FFFD)"


def iter_records(path: pathlib.Path) -> Iterator[tuple[int, str, object]]:
    """(index, source, parsed object or `Unparsed`) for every record of a JSONL or JSON-list file."""
    # surrogateescape keeps the bytes that are not UTF-8 as they were until they are decoded
    # (as errors="replace" would) and counted, with the lone surrogates JSON escapes can hold.
    # "utf-8-sig" drops a UTF-8 byte-order mark at the start of the file, and only there.
    with path.open("rb") as fh:
        head = fh.read(4)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # a UTF-16 byte-order mark
        yield (
            0,
            "line 1",
            Unparsed(
                "the file is UTF-16 (it starts with a UTF-16 byte-order mark); "
                "the input must be UTF-8"
            ),
        )
        return
    if _first_char(path) == "[":
        text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")
        # Entry by entry: one that cannot be built is that item's error; a list that does not
        # parse as a whole is one error, as its items could not be told apart.
        items = list(entries(text))
        if items and items[-1][0] is None:
            _, at, why = items[-1]
            if isinstance(why, Unparsed):  # where the list stopped parsing
                yield 0, f"line {at}", Unparsed(f"the JSON list {why.reason}")
                return
        repair = _MAY_HOLD_SURROGATE.search(text) is not None
        del text
        for i, (_, _, obj) in enumerate(items):
            replaced = 0
            if repair and not isinstance(obj, Unparsed):
                obj, replaced = _repaired(obj, escaped_bytes=True)
            yield i, _with_repairs(f"item {i}", replaced), obj
        return
    index = 0
    with path.open("r", encoding="utf-8-sig", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            obj, replaced = _parsed(line)
            if isinstance(obj, Malformed):
                obj = Unparsed(f"malformed JSON on line {lineno}: {obj.reason}")
            elif isinstance(obj, Unparsed):
                obj = Unparsed(f"unreadable JSON on line {lineno}: {obj.reason}")
            yield index, _with_repairs(f"line {lineno}", replaced), obj
            index += 1


def read_items(
    records: Iterator[tuple[int, str, object]],
    limit: int | None,
    make,
    limits: InputLimits = DEFAULT_LIMITS,
    text_bytes: int | None = None,
) -> Iterator:
    """`make(index, source, obj, seen_ids)` for each record, an `InputError` for each unreadable
    one or one holding a value over `limits`, stopping after `limit` records; shared by the
    response and dataset readers. `text_bytes`: the size of the JSON or TSV text every record was
    parsed from (0: Arrow rows, whose lengths were checked before they were built; None: not
    known). A value parsed from text is never longer than that text, so the walk over each
    record's values is needed only when the text is longer than the limit."""
    seen: set[str] = set()
    walk = text_bytes is None or text_bytes > limits.max_text_chars
    for index, source, obj in records:
        if limit is not None and index >= limit:
            return
        if isinstance(obj, Unparsed):
            yield InputError(index, None, source, obj.reason)
        elif walk and (why := oversize(obj, limits)) is not None:
            yield InputError(index, _small_id(obj), source, why, kept_fields(obj))
        else:
            yield make(index, source, obj, seen)


def _small_id(obj: object) -> str | None:
    """The row's id when it is one that can be shown (a short string or an integer)."""
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None
    rid = str(rid).strip()
    return rid if rid and len(rid) <= 200 else None


def read_responses(
    path: str | pathlib.Path, limit: int | None = None, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """Every response in input order, valid or not; a value over `limits` is its item's error."""
    path = pathlib.Path(path)
    return read_items(iter_records(path), limit, _item, limits, text_size(path))


def text_size(path: pathlib.Path) -> int | None:
    """The bytes of a text file the records are parsed from; None when it cannot be told."""
    try:
        return path.stat().st_size
    except OSError:
        return None
