"""Reading multiple-choice questions about videos, for responders to answer.

Formats, told apart by the path: a folder written by HuggingFace `datasets`
(`Dataset.save_to_disk`, what the MURGAT reference loads with `load_from_disk`), a `.parquet`
file, an `.arrow` file, and otherwise JSONL or a JSON list (as for responses). The folder's
shards are Arrow IPC streams read with pyarrow, so `datasets` itself is not needed. Parquet and
Arrow are read a batch at a time, JSONL a line at a time.

Reading never stops at a bad row: each becomes an `InputError` at its position, and the rest
are read. A problem with the whole input (no such file, a folder that is not a saved dataset)
is one `InputError` at the position it was met.
"""

from __future__ import annotations

import hashlib
import pathlib
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .jsontext import Unparsed, parse
from .limits import DEFAULT_LIMITS, InputLimits, batch_oversize, image_problem
from .responses import InputError, iter_records, read_items, text_size

LETTERS = string.ascii_uppercase
_BATCH_ROWS = 1024


MULTIPLE_CHOICE = "multiple-choice"
OPEN = "open"
OPEN_TYPES = ("open", "open-ended", "open_ended", "short-answer", "short_answer", "free-form")
# Grouping fields the known benchmarks carry; a generic row that has them keeps them as categories.
CATEGORY_FIELDS = (
    "domain",
    "sub_category",
    "task_domain",
    "task_type",
    "duration",
    "audio_class",
    "track",
    "discipline",
    "subject",
    "category",
    "sub_task",
)


@dataclass(frozen=True)
class DatasetImage:
    """An image a question refers to (Video-MMMU's `<image 1>`), carried as its encoded bytes."""

    name: str
    data: bytes = field(repr=False)
    sha256: str = ""

    def describe(self) -> dict:
        return {"name": self.name, "bytes": len(self.data), "sha256": self.sha256}


@dataclass(frozen=True)
class Invalid:
    """A row a format reader could not make into a question; its id when one is known."""

    id: str | None
    reason: str


@dataclass(frozen=True)
class DatasetItem:
    index: int  # position in the input, 0-based
    id: str
    video: str
    question: str
    options: tuple[str, ...] | None = None
    answer: str | None = None  # gold letter (multiple-choice) or gold text (open); None when absent
    answer_raw: object = None  # the gold answer as the dataset wrote it
    source: str = ""  # "line 12", "item 3" or "row 7"
    row: dict = field(default_factory=dict, compare=False, repr=False)
    question_type: str = MULTIPLE_CHOICE
    categories: dict = field(default_factory=dict, compare=False)
    images: tuple[DatasetImage, ...] = ()


DatasetRead = DatasetItem | InputError


def read_dataset(
    path: str | pathlib.Path, limit: int | None = None, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[DatasetRead]:
    """Every question in input order, valid or not.

    Args:
        path: a `save_to_disk` folder, a `.parquet` or `.arrow` file, a JSONL file or a JSON list.
        limit: read at most this many rows (bad rows count).
        limits: how large a row's values may be (a row over one is that row's error).

    Fields of a row: `id` (optional: made from `video` and a hash of `question` when absent),
    `video` and `question` (strings, required), `options` (a list of strings, or an object
    keyed by letters), `answer` (the gold letter: "B", "(b)", "B. text", an option's text, or
    an integer index into `options`). Every other field stays in `DatasetItem.row`.
    """
    path = pathlib.Path(path)
    arrow = path.is_dir() or path.suffix.lower() in (".parquet", ".arrow")
    return read_items(
        _records(path, limits), limit, item_maker(limits), limits, 0 if arrow else text_size(path)
    )


def render_options(options: Sequence[str] | None) -> str:
    """Options as "A: ..." lines, the way the MURGAT reference puts them in its prompt."""
    return "\n".join(f"{LETTERS[i]}: {opt}" for i, opt in enumerate(options or ()))


def match_option(text: str, options: Sequence[str] | None) -> str | None:
    """The letter of the one option whose text `text` is.

    Case, punctuation and spacing are ignored, and so is an option's own letter prefix
    ("A. blue" is matched by "blue"). No match, or several, gives None.
    """
    wanted = _normalize(text)
    if not wanted or not options:
        return None
    hits = [
        i for i, opt in enumerate(options) if _normalize(_drop_own_prefix(str(opt), i)) == wanted
    ]
    return LETTERS[hits[0]] if len(hits) == 1 else None


# ---------------------------------------------------------------- rows


def item_maker(limits: InputLimits):
    """`_item` with the row's images checked against `limits` (header only, nothing decoded)."""

    def make(index: int, source: str, obj: object, seen: set[str]) -> DatasetRead:
        made = _item(index, source, obj, seen)
        for k, image in enumerate(made.images if isinstance(made, DatasetItem) else ()):
            why = image_problem(f"image {k + 1} ({image.name})", image.data, limits)
            if why is not None:
                return InputError(index, made.id, source, why)
        return made

    return make


def _item(index: int, source: str, obj: object, seen: set[str]) -> DatasetRead:
    if isinstance(obj, Invalid):
        return InputError(index, obj.id, source, obj.reason)
    if not isinstance(obj, dict):
        return InputError(index, None, source, f"expected an object, got {type(obj).__name__}")
    rid = obj.get("id")
    if isinstance(rid, str) and not rid.strip():
        rid = None
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, (str, int))):
        return InputError(
            index,
            None,
            source,
            f"field 'id' must be a string or an integer, not {type(rid).__name__}",
        )
    rid = str(rid).strip() if rid is not None else None
    texts = {}
    for name in ("video", "question"):
        value = obj.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return InputError(index, rid, source, f"missing field {name!r}")
        if not isinstance(value, str):
            return InputError(
                index, rid, source, f"field {name!r} is not a string ({type(value).__name__})"
            )
        texts[name] = value.strip()
    if rid is None:
        # Stable across runs and machines: the reference keys an item by (video, question) too.
        digest = hashlib.sha256(texts["question"].encode("utf-8")).hexdigest()[:8]
        rid = f"{texts['video']}#{digest}"
    if rid in seen:
        return InputError(index, rid, source, f"duplicate id {rid!r} (first occurrence kept)")
    seen.add(rid)
    options, why = _options(obj.get("options"))
    if why:
        return InputError(index, rid, source, why)
    answer = obj.get("answer")
    kind = question_type(obj.get("question_type"), options, answer)
    if kind == OPEN:
        gold = None if answer is None else str(answer).strip() or None
    else:
        gold = _gold_letter(answer, options)
        if answer is not None and gold is None and obj.get("_strict_answer"):
            return InputError(
                index,
                rid,
                source,
                f"field 'answer' {answer!r} names no option (A-{LETTERS[len(options or ()) - 1]})",
            )
    images = obj.get("_images") or ()
    row = {k: v for k, v in obj.items() if not k.startswith("_")}
    return DatasetItem(
        index=index,
        id=rid,
        video=texts["video"],
        question=texts["question"],
        options=options,
        answer=gold,
        answer_raw=answer,
        source=source,
        row=row,
        question_type=kind,
        categories=_categories(obj),
        images=tuple(images),
    )


def question_type(declared: object, options: Sequence[str] | None, answer: object) -> str:
    """Multiple-choice when there are options to choose from, whatever the row says (Video-MMMU
    writes "None" on some multiple-choice rows). Without options: open when the row says so, or
    when its gold answer is text that names no letter ("8", "Paris"); a letter ("B", "(f)") or an
    index keeps the question multiple-choice, its options written into the question itself."""
    if options:
        return MULTIPLE_CHOICE
    if isinstance(declared, str) and declared.strip().lower() in OPEN_TYPES:
        return OPEN
    if isinstance(answer, str) and answer.strip() and _gold_letter(answer, None) is None:
        return OPEN
    return MULTIPLE_CHOICE


def _categories(obj: dict) -> dict:
    given = obj.get("categories")
    if isinstance(given, dict):
        return {str(k): v for k, v in given.items() if _category_value(v)}
    return {f: obj[f] for f in CATEGORY_FIELDS if f in obj and _category_value(obj[f])}


def _category_value(v: object) -> bool:
    if isinstance(v, str):
        return bool(v.strip())
    return isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v)


def _options(value: object) -> tuple[tuple[str, ...] | None, str | None]:
    """(options in letter order, None) or (None, why they are unusable)."""
    if value is None:
        return None, None
    if isinstance(value, dict):
        # A parquet struct column gives every row every key; the ones a row lacks are None.
        keyed = {
            str(k).strip().strip("()[].:").upper(): v for k, v in value.items() if v is not None
        }
        if any(len(k) != 1 or k not in LETTERS for k in keyed):
            return None, f"field 'options' has keys that are not letters: {sorted(keyed)}"
        if sorted(keyed) != list(LETTERS[: len(keyed)]):
            return (
                None,
                f"field 'options' letters must run A, B, C, ... without gaps, got {sorted(keyed)}",
            )
        value = [keyed[k] for k in sorted(keyed)]
    if not isinstance(value, (list, tuple)):
        return (
            None,
            f"field 'options' must be a list of strings or an object keyed by letters, not {type(value).__name__}",
        )
    if len(value) > len(LETTERS):
        return None, f"field 'options' has {len(value)} options, more than there are letters"
    texts = []
    for i, opt in enumerate(value):
        if isinstance(opt, bool) or not isinstance(opt, (str, int, float)):
            return (
                None,
                f"option {LETTERS[i] if i < len(LETTERS) else i} is not a string ({type(opt).__name__})",
            )
        texts.append(str(opt))
    return (tuple(texts) or None), None


_GOLD = re.compile(r"\s*([(\[])?\s*([A-Za-z])\s*([)\]])?(.*)", re.DOTALL)


def _gold_letter(value: object, options: tuple[str, ...] | None) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):  # an index can only be checked against the options it points into
        return LETTERS[value] if options and 0 <= value < len(options) else None
    if not isinstance(value, str):
        return None
    m = _GOLD.fullmatch(value)
    if m:
        letter, closed, rest = m.group(2).upper(), m.group(3), m.group(4).strip()
        # "B", "(b)", "B. text", "B: text", "B) text"; not "A man" nor "Bob".
        if not rest or closed or rest[0] in ".:-":
            return letter if not options or LETTERS.index(letter) < len(options) else None
    return match_option(value, options)


def _drop_own_prefix(option: str, index: int) -> str:
    m = re.match(r"\s*[(\[]?([A-Za-z])\s*[)\].:]\s*", option)
    return option[m.end() :] if m and m.group(1).upper() == LETTERS[index] else option


def _normalize(text: str) -> str:
    kept = "".join(ch if ch.isalnum() else " " for ch in text.casefold())
    return " ".join(kept.split())


# ---------------------------------------------------------------- formats


def _records(
    path: pathlib.Path, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    if path.is_dir():
        yield from _saved_dataset(path, limits)
    elif not path.is_file():
        yield 0, str(path), Unparsed(f"{path} does not exist")
    elif path.suffix.lower() == ".parquet":
        yield from _rows(path, _parquet_batches(path), limits=limits)
    elif path.suffix.lower() == ".arrow":
        yield from _rows(path, _arrow_batches(path), limits=limits)
    else:
        yield from iter_records(path)


def _json_file(path: pathlib.Path) -> object:
    """The JSON value of a small file beside the data (state.json), or `Unparsed` with why not."""
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        return Unparsed(f"{type(e).__name__}: {e}")


def _saved_dataset(
    folder: pathlib.Path, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    state = folder / "state.json"
    if not state.is_file():
        splits = folder / "dataset_dict.json"
        if splits.is_file():
            listed: Any = _json_file(splits)  # JSON: its shape is checked as it is read
            names = listed.get("splits") if isinstance(listed, dict) else None
            names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
            yield (
                0,
                str(folder),
                Unparsed(
                    f"{folder} holds several splits ({', '.join(names) or 'unreadable dataset_dict.json'}); "
                    f"give one split's folder, e.g. {folder / (names[0] if names else 'test')}"
                ),
            )
        else:
            yield (
                0,
                str(folder),
                Unparsed(f"{folder} is not a folder written by save_to_disk (no state.json)"),
            )
        return
    listed = _json_file(state)
    if isinstance(listed, Unparsed):
        yield 0, str(state), Unparsed(f"{state} does not list the data files ({listed.reason})")
        return
    try:
        names = [f["filename"] for f in listed["_data_files"]]
        files = [folder / _data_file_name(n) for n in names]
    except (ValueError, KeyError, TypeError) as e:
        yield (
            0,
            str(state),
            Unparsed(f"{state} does not list the data files ({type(e).__name__}: {e})"),
        )
        return
    # state.json is part of the input, not trusted: its names may not lead out of the folder.
    inside = folder.resolve()
    for name, file in zip(names, files):
        if (
            pathlib.PurePath(name).is_absolute()
            or ".." in pathlib.PurePath(name).parts
            or inside not in file.resolve().parents
        ):
            yield 0, str(state), Unparsed(f"{state} names a data file outside its folder: {name!r}")
            return
    start = 0
    for file in files:
        for index, source, obj in _rows(file, _arrow_batches(file), start, limits):
            yield index, source, obj
            start = index + 1
            if isinstance(obj, Unparsed):
                return


def _data_file_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a data file name must be a non-empty string, not {name!r}")
    return name


def _rows(
    path: pathlib.Path, batches: Iterator, start: int = 0, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    """Rows numbered from `start`; an unreadable file ends with one `Unparsed` and no more rows:
    where its rows would have been is unknown, so later ones could not keep their numbers. A row
    holding a value over `limits` is an `Invalid`, found from Arrow's lengths before the batch
    becomes Python objects, and never built."""
    import pyarrow as pa

    index = start
    try:
        for batch in batches:
            over = batch_oversize(batch, limits)
            if not over:
                rows = iter(batch.to_pylist())
            else:
                keep = pa.array([i not in over for i in range(batch.num_rows)])
                rows = iter(batch.filter(keep).to_pylist())
            for i in range(batch.num_rows):
                row = Invalid(_arrow_id(batch, i), over[i]) if i in over else next(rows)
                yield index, f"row {index}", row
                index += 1
    except (OSError, pa.ArrowException) as e:
        yield index, f"row {index}", Unparsed(f"{path.name} cannot be read past row {index}: {e}")


def _arrow_id(batch, row: int) -> str | None:
    """The `id` of an Arrow row when it is a short string or an integer; None otherwise."""
    import pyarrow as pa

    if "id" not in batch.schema.names:
        return None
    column = batch.column("id")
    if not (
        pa.types.is_string(column.type)
        or pa.types.is_large_string(column.type)
        or pa.types.is_integer(column.type)
    ):
        return None
    value = column[row]
    if pa.types.is_integer(column.type):
        return None if not value.is_valid else str(value.as_py())
    import pyarrow.compute as pc

    if not value.is_valid or pc.utf8_length(column.slice(row, 1))[0].as_py() > 200:
        return None
    return value.as_py().strip() or None


def _parquet_batches(path: pathlib.Path) -> Iterator:
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as pf:
        yield from pf.iter_batches(batch_size=_BATCH_ROWS)


def _arrow_batches(path: pathlib.Path) -> Iterator:
    """Record batches of an Arrow IPC stream (what `datasets` writes) or, failing that, IPC file."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    with pa.memory_map(str(path)) as source:
        try:
            reader = ipc.open_stream(source)
        except pa.ArrowInvalid:
            source.seek(0)
            file_reader = ipc.open_file(source)
            for i in range(file_reader.num_record_batches):
                yield file_reader.get_batch(i)
            return
        yield from reader
