"""Logic-style plans: parse a small Python-like program and check it before anything runs.

The source is only ever handed to `ast.parse` (a syntax tree, no bytecode): it is never compiled,
`exec`'d or `eval`'d. The check is a whitelist: a node type not named here is refused with its
line, so a construct Python adds later is refused too. What the check guarantees, the interpreter
relies on: no attribute access except `video.query`, `video.find` and `NAME.append`, no calls but
the tools and a few builtins implemented by the interpreter, no dunder names, no definitions but
the single `main`, and a tree no deeper than `Limits.max_depth`.
"""

from __future__ import annotations

import ast
import threading
import warnings
from dataclasses import dataclass

from .limits import Limits, ProgramError

BUILTINS = frozenset({"len", "range", "str", "int", "min", "max", "enumerate"})
VIDEO = "video"
MAIN = "main"
RESERVED = BUILTINS | {"answer", VIDEO, MAIN}
# name -> (fewest, most) positional arguments
ARITY = {
    "len": (1, 1),
    "range": (1, 3),
    "str": (1, 1),
    "int": (1, 1),
    "min": (1, 64),
    "max": (1, 64),
    "enumerate": (1, 1),
    "answer": (2, 3),
    "query": (3, 3),
    "find": (2, 2),
    "append": (1, 1),
}
SIGNATURES = {
    "query": "video.query(time, question, modality)",
    "find": "video.find(description, modality)",
    "answer": "answer(question, evidence, options)",
}

QUERY_NO_TIMES = "name no times yourself in the imperative variant: query a span from video.find"

_NAMED = {
    ast.Import: "import",
    ast.ImportFrom: "import",
    ast.Lambda: "lambda",
    ast.ClassDef: "class",
    ast.Try: "try",
    ast.With: "with",
    ast.AsyncWith: "with",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
    ast.Raise: "raise",
    ast.Delete: "del",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Await: "await",
    ast.Assert: "assert",
    ast.AsyncFunctionDef: "async def",
    ast.AsyncFor: "async for",
    ast.NamedExpr: ":=",
    ast.Starred: "starred argument",
    ast.GeneratorExp: "generator expression",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.Set: "set literal",
    ast.AnnAssign: "annotated assignment",
    ast.Match: "match",
}
if hasattr(ast, "TryStar"):
    _NAMED[ast.TryStar] = "try"

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_UNARY = (ast.Not, ast.USub, ast.UAdd)
_CONST = (str, int, float, bool, type(None))
_EXPR_PLAIN = (ast.List, ast.Tuple, ast.Subscript, ast.Slice, ast.Compare, ast.BoolOp, ast.IfExp)
_CONTEXT = (ast.expr_context, ast.boolop, ast.cmpop, ast.operator, ast.unaryop)
# To quote the offending line in a SyntaxError, CPython tries to open a file by the name the parser
# was given ("<unknown>" by default, relative to the working directory). A name with a lone
# surrogate cannot become a path, so that attempt ends before anything is opened (tested with an
# audit hook): parsing a plan touches no file.
_PARSE_FILENAME = "<plan \ud800>"
_PARSE_LOCK = threading.Lock()


@dataclass(frozen=True)
class LogicPlan:
    """A checked program: the statements to run (main's body, or the top-level statements)."""

    body: tuple[ast.stmt, ...]
    imperative: bool
    source: str
    allow_times: bool = True  # False: an imperative plan may query only spans that find returned


class _Refuse(Exception):
    def __init__(self, reason: str, node: ast.AST | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = getattr(node, "lineno", None)


def parse_logic(
    source: str, imperative: bool, limits: Limits = Limits(), allow_times: bool = True
) -> LogicPlan | ProgramError:
    """Parse and check a plan; a `ProgramError` (kind `refused`) names the first problem found.

    `allow_times=False` (imperative only): `video.query` must be given a span from `video.find`;
    a literal time is refused here, a computed one when the call runs."""
    if len(source) > limits.max_source_chars:
        return ProgramError(
            "refused",
            f"source is {len(source)} characters, more than {limits.max_source_chars} (limit max_source_chars)",
        )
    try:
        # SyntaxWarning / DeprecationWarning are not our output. catch_warnings swaps the global
        # filter list, so parses in several threads must not interleave: the lock keeps each
        # save/restore pair whole, and the filters end as they began.
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, _PARSE_FILENAME, mode="exec")
    except SyntaxError as e:
        return ProgramError("refused", f"syntax error: {e.msg}", e.lineno)
    except (RecursionError, MemoryError):
        # How deep the parser goes depends on the process's recursion limit (torch's compiler
        # raises it): the refusal is the one the depth check gives, the same either way.
        return _too_deep(limits.max_depth)
    except ValueError as e:  # e.g. null bytes on some Python versions
        return ProgramError("refused", f"syntax error: {e}")
    if _deeper_than(tree, limits.max_depth):
        return _too_deep(limits.max_depth)
    try:
        body = _entry(tree)
        _Checker(imperative, limits, allow_times or not imperative).block(body, in_loop=False)
    except _Refuse as r:
        return ProgramError("refused", r.reason, r.line)
    return LogicPlan(tuple(body), imperative, source, allow_times or not imperative)


def _too_deep(max_depth: int) -> ProgramError:
    """No line: a tree the parser gave up on has none to name."""
    return ProgramError(
        "refused", f"program is nested too deeply (limit max_depth: {max_depth} levels)"
    )


def _deeper_than(tree: ast.AST, max_depth: int) -> bool:
    """Iterative, so a deep tree is refused here instead of overflowing a recursive walk."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _CONTEXT):
                stack.append((child, depth + 1))
    return False


def _is_main_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == MAIN
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == VIDEO
        and not node.keywords
    )


def _entry(tree: ast.Module) -> list[ast.stmt]:
    """`def main(video):` (optionally followed by one `main(video)` call, ignored), or plain
    statements. Returns the statements to run."""
    body = list(tree.body)
    if not body:
        raise _Refuse("program is empty", None)
    defs = [s for s in body if isinstance(s, ast.FunctionDef)]
    if not defs:
        return body
    first = body[0]
    if not isinstance(first, ast.FunctionDef) or first.name != MAIN:
        if defs[0].name == MAIN:
            raise _Refuse(
                "'def main(video):' must come first, with no statements before it", defs[0]
            )
        raise _Refuse(
            f"'def {defs[0].name}' is not allowed: only a single 'def main(video):'", defs[0]
        )
    rest = body[1:]
    if len(rest) > 1 or any(
        not (isinstance(s, (ast.Expr, ast.Assign)) and _is_main_call(s.value)) for s in rest
    ):
        extra = next((s for s in rest if isinstance(s, ast.FunctionDef)), rest[0])
        if isinstance(extra, ast.FunctionDef):
            raise _Refuse(f"a second 'def' ('{extra.name}') is not allowed", extra)
        raise _Refuse("only 'main(video)' may follow 'def main(video):'", extra)
    if first.decorator_list:
        raise _Refuse("decorators are not allowed", first.decorator_list[0])
    a = first.args
    if (
        len(a.args) != 1
        or a.args[0].arg != VIDEO
        or a.posonlyargs
        or a.kwonlyargs
        or a.vararg
        or a.kwarg
        or a.defaults
        or a.kw_defaults
    ):
        raise _Refuse("main must take exactly one parameter, 'video'", first)
    if a.args[0].annotation is not None or first.returns is not None:
        raise _Refuse("annotations are not allowed", first)
    if getattr(first, "type_params", None):
        raise _Refuse("type parameters are not allowed", first)
    return list(first.body)


class _Checker:
    """Recursive whitelist walk; safe because `_deeper_than` bounded the tree first."""

    def __init__(self, imperative: bool, limits: Limits, times: bool) -> None:
        self.imperative = imperative
        self.limits = limits
        self.times = times

    def block(self, stmts: list[ast.stmt], in_loop: bool) -> None:
        for s in stmts:
            self.stmt(s, in_loop)

    def stmt(self, s: ast.stmt, in_loop: bool) -> None:
        if isinstance(s, ast.Expr):
            self.expr(s.value)
        elif isinstance(s, ast.Assign):
            for t in s.targets:
                self.target(t)
            self.expr(s.value)
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, (ast.Name, ast.Subscript)):
                raise _Refuse("augmented assignment needs a name or an item as its target", s)
            self.binop(s.op, s)
            self.target(s.target)
            self.expr(s.value)
        elif isinstance(s, (ast.For, ast.While)):
            if s.orelse:
                raise _Refuse(
                    f"'{'for' if isinstance(s, ast.For) else 'while'}/else' is not allowed", s
                )
            if isinstance(s, ast.For):
                self.target(s.target)
                self.expr(s.iter)
            else:
                self.expr(s.test)
            self.block(s.body, in_loop=True)
        elif isinstance(s, ast.If):
            self.expr(s.test)
            self.block(s.body, in_loop)
            self.block(s.orelse, in_loop)
        elif isinstance(s, (ast.Break, ast.Continue)):
            if not in_loop:
                raise _Refuse(f"'{type(s).__name__.lower()}' outside a loop", s)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                self.expr(s.value)
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.FunctionDef):
            raise _Refuse(
                f"'def {s.name}' is not allowed: only a single top-level 'def main(video):'", s
            )
        else:
            raise _Refuse(f"{_name(s)} is not allowed", s)

    def target(self, t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            self.name(t.id, t)
            if t.id in RESERVED:
                raise _Refuse(f"cannot assign to reserved name '{t.id}'", t)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.target(e)
        elif isinstance(t, ast.Subscript):
            self.expr(t.value)
            self.expr(t.slice)
        else:
            raise _Refuse(f"cannot assign to {_name(t)}", t)

    def name(self, ident: str, node: ast.AST) -> None:
        if "__" in ident:
            raise _Refuse(f"name '{ident}' is not allowed (double underscore)", node)

    def binop(self, op: ast.operator, node: ast.AST) -> None:
        if not isinstance(op, _BINOPS):
            raise _Refuse(f"operator {type(op).__name__} is not allowed", node)

    def expr(self, e: ast.expr) -> None:
        if isinstance(e, ast.Constant):
            if not isinstance(e.value, _CONST):
                raise _Refuse(f"constant of type {type(e.value).__name__} is not allowed", e)
            bits = self.limits.max_int_bits
            if isinstance(e.value, int) and e.value.bit_length() > bits:
                raise _Refuse(f"integer constant has more than {bits} bits (limit max_int_bits)", e)
        elif isinstance(e, ast.Name):
            self.name(e.id, e)
            if e.id == VIDEO:
                raise _Refuse("'video' can only be used as video.query(...) or video.find(...)", e)
            if e.id in RESERVED:
                raise _Refuse(f"'{e.id}' can only be called", e)
        elif isinstance(e, ast.Attribute):
            raise _Refuse(f"attribute access '{e.attr}' is not allowed", e)
        elif isinstance(e, ast.Call):
            self.call(e)
        elif isinstance(e, ast.BinOp):
            self.binop(e.op, e)
            self.children(e)
        elif isinstance(e, ast.UnaryOp):
            if not isinstance(e.op, _UNARY):
                raise _Refuse(f"operator {type(e.op).__name__} is not allowed", e)
            self.expr(e.operand)
        elif isinstance(e, ast.Dict):
            if any(k is None for k in e.keys):
                raise _Refuse("dict unpacking '**' is not allowed", e)
            self.children(e)
        elif isinstance(e, ast.JoinedStr):
            self.fstring(e)
        elif isinstance(e, ast.ListComp):
            for g in e.generators:
                if g.is_async:
                    raise _Refuse("async comprehension is not allowed", e)
                self.target(g.target)
                self.expr(g.iter)
                for cond in g.ifs:
                    self.expr(cond)
            self.expr(e.elt)
        elif isinstance(e, _EXPR_PLAIN):
            self.children(e)
        else:
            raise _Refuse(f"{_name(e)} is not allowed", e)

    def children(self, e: ast.expr) -> None:
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif not isinstance(child, _CONTEXT):
                raise _Refuse(f"{_name(child)} is not allowed", e)

    def fstring(self, e: ast.JoinedStr) -> None:
        for part in e.values:
            if isinstance(part, ast.Constant):
                continue
            if not isinstance(part, ast.FormattedValue):
                raise _Refuse(f"{_name(part)} in an f-string is not allowed", e)
            if part.conversion != -1:
                raise _Refuse(f"f-string conversion '!{chr(part.conversion)}' is not allowed", e)
            if part.format_spec is not None:
                raise _Refuse("f-string format spec is not allowed (only plain '{x}')", e)
            self.expr(part.value)

    def call(self, c: ast.Call) -> None:
        if c.keywords:
            raise _Refuse("keyword arguments are not allowed", c)
        if any(isinstance(a, ast.Starred) for a in c.args):
            raise _Refuse("starred arguments are not allowed", c)
        f = c.func
        if isinstance(f, ast.Attribute):
            key = self.method(f)
        elif isinstance(f, ast.Name):
            self.name(f.id, f)
            if f.id == MAIN:
                raise _Refuse("calling 'main' is not allowed", c)
            if f.id not in BUILTINS and f.id != "answer":
                raise _Refuse(f"calling '{f.id}' is not allowed", c)
            key = f.id
        else:
            raise _Refuse(f"calling {_name(f)} is not allowed (only named functions)", c)
        low, high = ARITY[key]
        if not low <= len(c.args) <= high:
            shown = SIGNATURES.get(key, key)
            want = str(low) if low == high else f"{low} to {high}"
            raise _Refuse(f"{shown} takes {want} arguments, got {len(c.args)}", c)
        if (
            key == "query"
            and not self.times
            and isinstance(c.args[0], (ast.Constant, ast.JoinedStr))
        ):
            raise _Refuse(f"video.query: {QUERY_NO_TIMES}", c)
        for a in c.args:
            self.expr(a)

    def method(self, f: ast.Attribute) -> str:
        if isinstance(f.value, ast.Name) and f.value.id == VIDEO and f.attr in ("query", "find"):
            if f.attr == "find" and not self.imperative:
                raise _Refuse(
                    "video.find is not allowed in the declarative variant (name the timestamps)", f
                )
            return f.attr
        if f.attr == "append" and isinstance(f.value, ast.Name) and f.value.id not in RESERVED:
            self.name(f.value.id, f.value)
            return "append"
        raise _Refuse(f"attribute access '{f.attr}' is not allowed", f)


def _name(node: ast.AST) -> str:
    named = _NAMED.get(type(node))
    return f"'{named}'" if named else type(node).__name__
