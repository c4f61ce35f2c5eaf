"""The one place JSON text from an input is parsed, for every reader.

Whatever the text holds, parsing gives a value or an `Unparsed` with the reason, never an
exception: malformed text, a number with more digits than Python reads from text (4,300), and
nesting deeper than `MAX_DEPTH` (which would otherwise exhaust the interpreter's stack, here or
in whatever walks the value later). A file that is one JSON list or object is read entry by
entry (`entries`), so one entry that cannot be read is that entry's error and the others are
still read.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Input rows nest a few levels (a row, its options or categories, a list inside those); the
# interpreter's stack gives out near 1,000.
MAX_DEPTH = 100


@dataclass(frozen=True)
class Unparsed:
    """A record that could not be read; `reason` says why."""

    reason: str


@dataclass(frozen=True)
class Malformed(Unparsed):
    """Text that is not JSON at all (the decoder's message and column); other `Unparsed` values
    are JSON this reader will not build (too deep, a number too long)."""


class _TooManyDigits(ValueError):
    def __init__(self, digits: int):
        super().__init__(digits)
        self.digits = digits


def _int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    digits = len(text.lstrip("-"))
    if limit and digits > limit:
        raise _TooManyDigits(digits)
    return int(text)


_DECODER = json.JSONDecoder(parse_int=_int)
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where `pattern`, which matches the empty string too, ends from `pos`."""
    m = pattern.match(text, pos)
    assert m is not None, "the pattern matches the empty string"
    return m.end()


def _skip_ws(text: str, pos: int) -> int:
    return _match_end(_WHITESPACE, text, pos)


def _reason(e: BaseException) -> str:
    """Why a value did not parse, for the item's error."""
    if isinstance(e, _TooManyDigits):
        return (
            f"a number with {e.digits:,} digits (Python reads at most {sys.get_int_max_str_digits():,} "
            "from text; write a long id as a string)"
        )
    if isinstance(e, (RecursionError, MemoryError)):
        return f"nested too deeply (more than {MAX_DEPTH} levels)"
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} (column {e.colno})"
    return f"{type(e).__name__}: {e}"


def parse(text: str) -> object:
    """The JSON value `text` holds, or `Unparsed` with the reason (malformed JSON's reason is
    the decoder's message and column)."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        return Malformed(_reason(e))
    except (ValueError, RecursionError, MemoryError) as e:
        return Unparsed(_reason(e))
    return _checked(value, text, 0, len(text))


def _checked(value: object, text: str, start: int, end: int) -> object:
    # Only text with that many brackets can nest that deep: most values skip the walk.
    if text.count("[", start, end) + text.count("{", start, end) > MAX_DEPTH and too_deep(value):
        return Unparsed(_reason(RecursionError()))
    return value


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and objects nest more than `limit` levels in `value` (walked without
    recursion, stopping at the first that does)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return False


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def entries(text: str) -> Iterator[tuple[object, int, object]]:
    """(key, line, value or `Unparsed`) for each entry of the JSON list (key: its position) or
    object (key: its name) that `text` holds, in order.

    An entry that does not parse is an `Unparsed` at its place; when where it ends can still be
    found (its brackets balance) the next entries are read, otherwise the last entry is an
    `Unparsed` with the key None saying where the text stopped parsing. Text that is not a list
    or an object is one entry (key None) with its value."""
    pos = _skip_ws(text, 0)
    opener = text[pos : pos + 1]
    if opener not in ("[", "{"):
        yield None, line_of(text, pos), parse(text)
        return
    closer = "]" if opener == "[" else "}"
    pos = _skip_ws(text, pos + 1)
    if text.startswith(closer, pos):
        yield from _trailing(text, pos + 1)
        return
    index = 0
    counted, line = 0, 1  # newlines are counted once, up to where the last entry started

    def line_at(at: int) -> int:
        nonlocal counted, line
        line += text.count("\n", counted, at)
        counted = at
        return line

    while True:
        start = pos
        try:
            if opener == "{":
                key, pos = _DECODER.raw_decode(text, pos)
                if not isinstance(key, str):
                    raise json.JSONDecodeError(
                        "Expecting property name enclosed in double quotes", text, start
                    )
                pos = _skip_ws(text, pos)
                if not text.startswith(":", pos):
                    raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
                pos = _skip_ws(text, pos + 1)
            else:
                key = index
        except json.JSONDecodeError as e:
            yield (
                None,
                e.lineno,
                Unparsed(f"does not parse: {e.msg} (line {e.lineno}, column {e.colno})"),
            )
            return
        value_at = pos
        try:
            value, pos = _DECODER.raw_decode(text, pos)
            value = _checked(value, text, value_at, pos)
        except json.JSONDecodeError as e:
            yield (
                None,
                e.lineno,
                Unparsed(f"does not parse: {e.msg} (line {e.lineno}, column {e.colno})"),
            )
            return
        except (ValueError, RecursionError, MemoryError) as e:
            end = _skip(text, value_at)
            if end is None:
                at = line_at(value_at)
                yield key, at, Unparsed(_reason(e))
                yield (
                    None,
                    at,
                    Unparsed(f"does not parse past line {at}: the entry there never closes"),
                )
                return
            value, pos = Unparsed(_reason(e)), end
        yield key, line_at(value_at), value
        index += 1
        pos = _skip_ws(text, pos)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
            continue
        if text.startswith(closer, pos):
            yield from _trailing(text, pos + 1)
            return
        line = line_of(text, pos)
        yield None, line, Unparsed(f"does not parse: Expecting ',' delimiter (line {line})")
        return


def _trailing(text: str, pos: int) -> Iterator[tuple[object, int, object]]:
    pos = _skip_ws(text, pos)
    if pos < len(text):
        line = line_of(text, pos)
        yield None, line, Unparsed(f"does not parse: Extra data (line {line})")


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SCALAR_END = re.compile(r"[^,\]}]*")


def _skip(text: str, pos: int) -> int | None:
    """Where the JSON value starting at `pos` ends, by its brackets alone (strings skipped), or
    None when they never balance."""
    if text[pos : pos + 1] not in ("[", "{"):
        return _match_end(_SCALAR_END, text, pos)  # a number too long for Python
    depth = 0
    for m in _TOKEN.finditer(text, pos):
        token = m.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == 0:
                return m.end()
    return None
