"""Operations on plan values, each sized BEFORE it runs.

Plan values are str, int, float, bool, None, list, tuple, dict, range, and the tools' opaque
`Span` / `Evidence`. Python's own operators do the work, but only after the size of the result is
known to fit: `"a" * 10**10` is refused from the lengths, not from a MemoryError. An operation
whose cost grows with its operands (comparison, membership, hashing a key, min/max) first walks
them with sharing expanded and charges that to `max_work` (`budget.expanded_size`), so a value
built from shared children cannot make one C-level call run for hours. Every value built is
charged its bytes (`sys.getsizeof`, counted as built). String `%` formatting is refused (its width
field is an allocation bomb), and `str()` is our own renderer, bounded by a budget, so a
self-containing list cannot make it loop.

A message never renders a plan value: `repr` of a value built from shared children walks every
path, and `str(KeyError(k))` is `repr(k)`. Messages name a value's kind and size (`describe`) and
build an exception's text from its type and bounded descriptions of its arguments (`error_text`).
"""

from __future__ import annotations

import ast
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

from .budget import CONTAINERS, TooDeep, expanded_size
from .limits import Limits, failed, over_limit
from .tools import Evidence, Span
from .trace import Meter

_SEQ = (str, list, tuple)
_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ERRORS = (
    TypeError,
    ValueError,
    ZeroDivisionError,
    OverflowError,
    IndexError,
    KeyError,
    RecursionError,
)


def _is_int(v: Any) -> bool:
    return isinstance(v, int)  # bool included: True * "x" is "x"


class Values:
    """Size-checked operations for one run."""

    def __init__(self, limits: Limits, meter: Meter) -> None:
        self.limits = limits
        self.meter = meter

    # ------------------------------------------------------------ sizes

    def fit(self, size: int, kind: str, line: int | None) -> None:
        """Refuse a value of `size` (characters or items) before it is built."""
        cap, name = (
            (self.limits.max_string_chars, "max_string_chars")
            if kind == "str"
            else (self.limits.max_items, "max_items")
        )
        if size > cap:
            what = "characters in a string" if kind == "str" else "items in a list, tuple or dict"
            raise over_limit(what, cap, name, line)

    def built(self, value: Any, line: int | None) -> Any:
        """Charge the bytes of a value just built (its own, not its children's: those were
        charged when they were built)."""
        self.meter.allocate(sys.getsizeof(value), line)
        return value

    def grew(self, container: Any, before: int, line: int | None) -> None:
        """Charge what a list or dict grew by (it may have over-allocated)."""
        self.meter.allocate(max(sys.getsizeof(container) - before, 0), line)

    def new(self, value: Any, line: int | None) -> Any:
        """Check and charge a value that was just built (small by construction, or already `fit`)."""
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            if value.bit_length() > self.limits.max_int_bits:
                raise over_limit(
                    "bits in an integer", self.limits.max_int_bits, "max_int_bits", line
                )
        elif isinstance(value, str):
            self.fit(len(value), "str", line)
        elif isinstance(value, CONTAINERS):
            self.fit(len(value), "items", line)
        return self.built(value, line)

    def cost(self, line: int | None, *values: Any) -> None:
        """Charge what an operation over `values` may visit, before it runs (see the module doc)."""
        for v in values:
            if isinstance(v, CONTAINERS):
                try:
                    n = expanded_size(
                        v,
                        self.meter.work_left(),
                        self.limits.max_value_depth,
                        lambda: self.meter.tick(line),
                    )
                except TooDeep:
                    raise over_limit(
                        "levels of nesting in a compared or hashed value",
                        self.limits.max_value_depth,
                        "max_value_depth",
                        line,
                    ) from None
                self.meter.work(n, line)
            elif isinstance(v, str) and len(v) > 64:
                self.meter.work(len(v) // 64, line)

    # ------------------------------------------------------------ operators

    def binop(self, op: ast.operator, a: Any, b: Any, line: int | None) -> Any:
        kind = type(op)
        if kind is ast.Mod and isinstance(a, str):
            raise failed("string formatting with '%' is not allowed (use an f-string)", line)
        if kind is ast.Add and isinstance(a, _SEQ) and type(a) is type(b):
            self.fit(len(a) + len(b), "str" if isinstance(a, str) else "items", line)
        elif kind is ast.Mult:
            seq, n = (a, b) if isinstance(a, _SEQ) else (b, a)
            if isinstance(seq, _SEQ) and _is_int(n):
                self.fit(len(seq) * max(n, 0), "str" if isinstance(seq, str) else "items", line)
        elif kind is ast.Pow and _is_int(a) and _is_int(b) and b > 0:
            if max(abs(a).bit_length() - 1, 0) * b > self.limits.max_int_bits:
                raise over_limit(
                    "bits in an integer", self.limits.max_int_bits, "max_int_bits", line
                )
        try:
            result = _ARITH[kind](a, b)
        except _ERRORS as e:
            raise failed(error_text(e), line) from None
        if isinstance(result, complex):
            raise failed("the result is a complex number", line)
        if isinstance(result, int) and not isinstance(result, bool):
            return self.new(result, line)
        return self.built(result, line)  # sequences were `fit` above

    def unary(self, op: ast.unaryop, v: Any, line: int | None) -> Any:
        if isinstance(op, ast.Not):
            return not v
        try:
            return -v if isinstance(op, ast.USub) else +v
        except _ERRORS as e:
            raise failed(error_text(e), line) from None

    def compare(self, op: ast.cmpop, a: Any, b: Any, line: int | None) -> bool:
        kind = type(op)
        if kind in (ast.In, ast.NotIn) and isinstance(b, dict):
            self.cost(line, a)  # hashing the key; the dict itself is not walked
        elif kind not in (ast.Is, ast.IsNot):
            self.cost(line, a, b)
        try:
            return bool(_CMP[type(op)](a, b))
        except _ERRORS as e:
            raise failed(error_text(e), line) from None

    def subscript(self, v: Any, key: Any, line: int | None) -> Any:
        if not isinstance(v, (str, list, tuple, dict, range)):
            raise failed(f"a {kind_of(v)} value cannot be indexed", line)
        if isinstance(v, dict):
            self.cost(line, key)
        try:
            result = v[key]
        except _ERRORS as e:
            raise failed(error_text(e), line) from None
        if isinstance(key, slice) and isinstance(result, _SEQ):
            self.built(result, line)
        return result

    def store_item(self, v: Any, key: Any, value: Any, line: int | None) -> None:
        if not isinstance(v, (dict, list)):
            raise failed(f"items of a {kind_of(v)} value cannot be assigned", line)
        if isinstance(key, slice):
            raise failed("slice assignment is not allowed", line)
        before = sys.getsizeof(v)
        try:
            if isinstance(v, dict):
                self.cost(line, key)
                if key not in v:
                    self.fit(len(v) + 1, "items", line)
            v[key] = value
        except _ERRORS as e:
            raise failed(error_text(e), line) from None
        self.grew(v, before, line)

    def iterate(self, v: Any, line: int | None) -> Any:
        if not isinstance(v, (str, list, tuple, dict, range)):
            raise failed(f"cannot loop over a {kind_of(v)} value", line)
        if isinstance(v, (list, dict)):  # a snapshot: appending inside is safe
            return self.built(list(v), line)
        return v

    # ------------------------------------------------------------ rendering

    def render(self, v: Any, line: int | None, quote: bool = False) -> str:
        """`str(v)` for plan values, within `max_string_chars`. Iterative, and every container it
        opens writes its bracket first, so a self-containing list ends at the character cap."""
        cap = self.limits.max_string_chars
        out: list[str] = []
        size = 0
        stack: list[Iterator[tuple[Any, bool]]] = [iter([(v, quote)])]
        while stack:
            try:
                item, q = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            if isinstance(item, (list, tuple, dict)):
                stack.append(_parts(item))
                continue
            if isinstance(item, _Raw):
                piece = item.text
            elif isinstance(item, str):
                piece = repr(item) if q else item
            elif isinstance(item, (Span, Evidence)):
                piece = str(item)
            elif isinstance(item, (bool, int, float, type(None), range)):
                piece = repr(item)
            else:
                piece = f"<{kind_of(item)}>"
            size += len(piece)
            if size > cap:
                raise over_limit("characters in a string", cap, "max_string_chars", line)
            out.append(piece)
        return self.built("".join(out), line)

    # ------------------------------------------------------------ builtins

    def builtin(self, name: str, args: list[Any], line: int | None) -> Any:
        if name == "len":
            if not isinstance(args[0], (str, list, tuple, dict, range)):
                raise failed(f"len() of a {kind_of(args[0])} value", line)
            return len(args[0])
        if name == "str":
            return self.render(args[0], line)
        if name == "int":
            return self._int(args[0], line)
        if name == "range":
            return self._range(args, line)
        if name == "enumerate":
            items = self.iterate(args[0], line)
            self.fit(len(items), "items", line)
            pairs = [self.built((i, x), line) for i, x in enumerate(items)]
            return self.built(pairs, line)
        values = args[0] if len(args) == 1 else args  # min / max
        if not isinstance(values, (list, tuple, str, range)) or len(values) == 0:
            raise failed(f"{name}() needs a non-empty list or at least two values", line)
        if not isinstance(values, range):
            self.cost(line, values)
        try:
            return min(values) if name == "min" else max(values)
        except _ERRORS as e:
            raise failed(error_text(e), line) from None

    def _range(self, args: list[Any], line: int | None) -> range:
        """Its length is computed here, in Python integers: `len()` of a range past a C integer
        would raise OverflowError instead of naming the limit."""
        if not all(_is_int(a) for a in args):
            raise failed("range() takes integers", line)
        start, stop, step = (
            (0, args[0], 1)
            if len(args) == 1
            else (args[0], args[1], args[2] if len(args) == 3 else 1)
        )
        if step == 0:
            raise failed("ValueError: range() arg 3 must not be zero", line)
        length = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
        if length > self.limits.max_iterations:
            raise over_limit(
                "loop iterations in a range", self.limits.max_iterations, "max_iterations", line
            )
        return self.built(range(start, stop, step), line)

    def _int(self, v: Any, line: int | None) -> int:
        if isinstance(v, str) and len(v) > 40:
            raise failed("int() of a string longer than 40 characters", line)
        if not isinstance(v, (str, int, float)):
            raise failed(f"int() of a {kind_of(v)} value", line)
        try:
            return self.new(int(v), line)
        except _ERRORS as e:
            raise failed(error_text(e), line) from None


class _Raw:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _parts(c: list | tuple | dict) -> Iterator[tuple[Any, bool]]:
    """A container as render pieces, lazily: brackets, separators, and its items (quoted)."""
    if isinstance(c, dict):
        yield _Raw("{"), False
        for i, (k, val) in enumerate(c.items()):
            if i:
                yield _Raw(", "), False
            yield k, True
            yield _Raw(": "), False
            yield val, True
        yield _Raw("}"), False
        return
    left, right = ("[", "]") if isinstance(c, list) else ("(", ",)" if len(c) == 1 else ")")
    yield _Raw(left), False
    for i, item in enumerate(c):
        if i:
            yield _Raw(", "), False
        yield item, True
    yield _Raw(right), False


def kind_of(v: Any) -> str:
    if isinstance(v, Span):
        return "span"
    if isinstance(v, Evidence):
        return "evidence"
    return type(v).__name__


QUOTED_CHARS = 40  # how much of a string value a message quotes
MESSAGE_CHARS = 200  # how much of an exception's own text a message keeps


def _clipped(text: str, n: int) -> str:
    return text if len(text) <= n else f"{text[:n]}… ({len(text)} characters)"


def describe(v: Any) -> str:
    """A plan value as a message names it, in under a hundred characters, whatever its size: a
    short quote of a string, a number, or a container's kind and top-level length (never its
    rendering)."""
    if isinstance(v, str):
        return repr(v) if len(v) <= QUOTED_CHARS else f"{v[:QUOTED_CHARS]!r}… ({len(v)} characters)"
    if isinstance(v, (bool, float)) or v is None:
        return repr(v)
    if isinstance(v, int):
        return repr(v) if v.bit_length() <= 64 else f"an integer of {v.bit_length()} bits"
    if isinstance(v, (list, tuple, dict)):
        return f"a {kind_of(v)} of {len(v)} item{'' if len(v) == 1 else 's'}"
    kind = kind_of(v)
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def error_text(e: BaseException) -> str:
    """`Type: arguments` for an exception raised over plan values, without `str(e)` (which may
    render a plan value of any size). A `KeyError`'s arguments are keys, so described; other
    string arguments are Python's own message, kept up to `MESSAGE_CHARS`."""
    parts = [
        _clipped(a, MESSAGE_CHARS)
        if isinstance(a, str) and not isinstance(e, KeyError)
        else describe(a)
        for a in e.args[:3]
    ]
    if len(e.args) > 3:
        parts.append(f"… ({len(e.args)} arguments)")
    name = type(e).__name__
    return f"{name}: {', '.join(parts)}" if parts else name
