"""Operations on plan values, each sized BEFORE it allocates.

Plan values are str, int, float, bool, None, list, tuple, dict, range, and the tools' opaque
`Span` / `Evidence`. Python's own operators do the work, but only after the size of the result is
known to fit: `"a" * 10**10` is refused from the lengths, not from a MemoryError. String `%`
formatting is refused (its width field is an allocation bomb), and `str()` is our own renderer,
bounded by a budget, so a self-containing list cannot make it loop.
"""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Iterator

from .limits import Limits, failed, over_limit
from .tools import Evidence, Span
from .trace import Meter

_SEQ = (str, list, tuple)
_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_ERRORS = (TypeError, ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError, RecursionError)


def _is_int(v: Any) -> bool:
    return isinstance(v, int)  # bool included: True * "x" is "x"


class Values:
    """Size-checked operations for one run."""

    def __init__(self, limits: Limits, meter: Meter) -> None:
        self.limits = limits
        self.meter = meter

    # ------------------------------------------------------------ sizes

    def fit(self, size: int, kind: str, line: int | None) -> None:
        """Refuse a value of `size` before it is built, and charge it to the run's allocation."""
        cap, name = (
            (self.limits.max_string_chars, "max_string_chars") if kind == "str"
            else (self.limits.max_items, "max_items")
        )
        if size > cap:
            what = "characters in a string" if kind == "str" else "items in a list, tuple or dict"
            raise over_limit(what, cap, name, line)
        self.meter.allocate(size, line)

    def new(self, value: Any, line: int | None) -> Any:
        """Check a value that was just built (small by construction, or already `fit`)."""
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            if value.bit_length() > self.limits.max_int_bits:
                raise over_limit("bits in an integer", self.limits.max_int_bits, "max_int_bits", line)
        elif isinstance(value, str):
            self.fit(len(value), "str", line)
        elif isinstance(value, (list, tuple, dict)):
            self.fit(len(value), "items", line)
        return value

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
                raise over_limit("bits in an integer", self.limits.max_int_bits, "max_int_bits", line)
        try:
            result = _ARITH[kind](a, b)
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None
        if isinstance(result, complex):
            raise failed("the result is a complex number", line)
        if isinstance(result, int) and not isinstance(result, bool):
            return self.new(result, line)
        return result  # sequences were `fit` above; floats are fixed-size

    def unary(self, op: ast.unaryop, v: Any, line: int | None) -> Any:
        if isinstance(op, ast.Not):
            return not v
        try:
            return -v if isinstance(op, ast.USub) else +v
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None

    def compare(self, op: ast.cmpop, a: Any, b: Any, line: int | None) -> bool:
        try:
            return bool(_CMP[type(op)](a, b))
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None

    def subscript(self, v: Any, key: Any, line: int | None) -> Any:
        if not isinstance(v, (str, list, tuple, dict, range)):
            raise failed(f"a {kind_of(v)} value cannot be indexed", line)
        try:
            result = v[key]
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None
        if isinstance(key, slice) and isinstance(result, _SEQ):
            self.meter.allocate(len(result), line)
        return result

    def store_item(self, v: Any, key: Any, value: Any, line: int | None) -> None:
        if not isinstance(v, (dict, list)):
            raise failed(f"items of a {kind_of(v)} value cannot be assigned", line)
        if isinstance(key, slice):
            raise failed("slice assignment is not allowed", line)
        try:
            if isinstance(v, dict) and key not in v:
                self.fit(len(v) + 1, "items", line)
            v[key] = value
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None

    def iterate(self, v: Any, line: int | None) -> Any:
        if not isinstance(v, (str, list, tuple, dict, range)):
            raise failed(f"cannot loop over a {kind_of(v)} value", line)
        return list(v) if isinstance(v, (list, dict)) else v  # a snapshot: appending inside is safe

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
        text = "".join(out)
        self.meter.allocate(len(text), line)
        return text

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
            if not all(_is_int(a) for a in args):
                raise failed("range() takes integers", line)
            try:
                r = range(*args)
            except ValueError as e:
                raise failed(f"ValueError: {e}", line) from None
            if len(r) > self.limits.max_iterations:
                raise over_limit("loop iterations in a range", self.limits.max_iterations, "max_iterations", line)
            return r
        if name == "enumerate":
            items = self.iterate(args[0], line)
            self.fit(len(items), "items", line)
            return [(i, x) for i, x in enumerate(items)]
        values = args[0] if len(args) == 1 else args  # min / max
        if not isinstance(values, (list, tuple, str, range)) or len(values) == 0:
            raise failed(f"{name}() needs a non-empty list or at least two values", line)
        try:
            return min(values) if name == "min" else max(values)
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None

    def _int(self, v: Any, line: int | None) -> int:
        if isinstance(v, str) and len(v) > 40:
            raise failed("int() of a string longer than 40 characters", line)
        if not isinstance(v, (str, int, float)):
            raise failed(f"int() of a {kind_of(v)} value", line)
        try:
            return self.new(int(v), line)
        except _ERRORS as e:
            raise failed(f"{type(e).__name__}: {e}", line) from None


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
