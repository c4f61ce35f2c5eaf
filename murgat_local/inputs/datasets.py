"""Reading multiple-choice questions about videos, for responders to answer.

Formats, told apart by the path: a folder written by HuggingFace `datasets`
(`Dataset.save_to_disk`, what the MURGAT reference loads with `load_from_disk`), a `.parquet`
file, an `.arrow` file, and otherwise JSONL or a JSON list (as for responses). The folder's
shards are Arrow IPC streams read with pyarrow, so `datasets` itself is not needed. Parquet and
Arrow are read a batch at a time, JSONL a line at a time (in `dataset_files.py`).

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

from .dataset_files import Invalid as Invalid
from .dataset_files import _records
from .limits import DEFAULT_LIMITS, InputLimits, image_problem
from .responses import InputError, read_items, text_size

LETTERS = string.ascii_uppercase


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
