"""Run a checked logic-style plan by walking its syntax tree: no `exec`, no `eval`, no bytecode.

Only the node types `logic.parse_logic` admitted reach here, so each branch below is the whole
meaning of its construct. Every statement and expression costs a step (and a clock check); every
loop turn costs an iteration; every value is sized by `values.Values` before it is built; every
tool call goes through the run's `Meter`, which records it. Errors inside the plan become a
`ProgramError` in the returned `Trace`; only a tool's own bug (an exception other than
`ToolError`, or a wrong result type) propagates, since hiding it would hide a broken engine. An
exception no branch raised on purpose is a bug here, not the plan's fault: it ends the plan as
`internal`, named by its type and where it was raised (never its text, which may render a plan
value).
"""

from __future__ import annotations

import ast
import sys
import time
from typing import Any

from .budget import RunBudget
from .limits import Limits, ProgramError, ProgramStop, failed, internal
from .logic import BUILTINS, QUERY_NO_TIMES, LogicPlan, parse_logic
from .tools import MODALITIES, Evidence, Span, Tools
from .trace import Clock, Meter, ToolCrash, Trace, refused_trace
from .values import Values, describe, kind_of


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def run_logic(
    plan: LogicPlan,
    tools: Tools,
    limits: Limits = Limits(),
    clock: Clock = time.monotonic,
    budget: RunBudget | None = None,
) -> Trace:
    """Execute a checked plan against `tools`; the trace says how it ended. `budget`: the byte
    pool this plan shares with the other plans of its run."""
    meter = Meter(limits, clock, budget=budget)
    run = _Interpreter(plan.imperative, tools, meter, limits, plan.allow_times)
    error: ProgramError | None = None
    returned: str | None = None
    try:
        try:
            run.block(plan.body)
        except _Return as r:
            returned = r.value if isinstance(r.value, str) else run.values.render(r.value, None)
    except ProgramStop as stop:
        error = stop.error
    except ToolCrash as crash:
        raise crash.original from None
    except RecursionError:
        error = ProgramError(
            "stopped",
            "expressions nested too deeply for the interpreter (limit max_depth)",
            run.line,
        )
    except MemoryError:
        error = ProgramError("stopped", "out of memory", run.line)
    except Exception as e:  # a bug in the interpreter: no branch raises anything else on purpose
        error = internal(e, run.line)
    return meter.trace("logic", plan.imperative, error, returned)


def run_logic_source(
    source: str,
    tools: Tools,
    imperative: bool,
    limits: Limits = Limits(),
    clock: Clock = time.monotonic,
    allow_times: bool = True,
    budget: RunBudget | None = None,
) -> Trace:
    """Parse, check and run; a refused plan gives a trace with no calls."""
    plan = parse_logic(source, imperative, limits, allow_times)
    if isinstance(plan, ProgramError):
        return refused_trace("logic", imperative, plan, limits)
    return run_logic(plan, tools, limits, clock, budget)


def _line(node: ast.AST) -> int | None:
    return getattr(node, "lineno", None)


def _str_arg(tool: str, what: str, v: Any, line: int | None) -> str:
    if not isinstance(v, str):
        raise failed(f"{tool}: {what} must be a string, got {kind_of(v)}", line)
    return v


def _modality(tool: str, v: Any, line: int | None) -> str:
    if not isinstance(v, str) or v not in MODALITIES:
        raise failed(f"{tool}: modality must be 'visual' or 'audio', got {describe(v)}", line)
    return v


class _Interpreter:
    def __init__(
        self, imperative: bool, tools: Tools, meter: Meter, limits: Limits, times: bool
    ) -> None:
        self.imperative = imperative
        self.times = times
        self.tools = tools
        self.meter = meter
        self.limits = limits
        self.values = Values(limits, meter)
        self.env: dict[str, Any] = {}
        self.line: int | None = None  # the statement running, for errors no branch anticipated

    # ------------------------------------------------------------ statements

    def block(self, stmts: Any) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        line = self.line = _line(s)
        self.meter.step(line)
        if isinstance(s, ast.Expr):
            self.evaluate(s.value)
        elif isinstance(s, ast.Assign):
            value = self.evaluate(s.value)
            for t in s.targets:
                self.assign(t, value, line)
        elif isinstance(s, ast.AugAssign):
            self.augassign(s, line)
        elif isinstance(s, ast.For):
            for item in self.values.iterate(self.evaluate(s.iter), line):
                self.meter.iteration(line)
                self.assign(s.target, item, line)
                if self.loop_body(s.body):
                    break
        elif isinstance(s, ast.While):
            while self.evaluate(s.test):
                self.meter.iteration(line)
                if self.loop_body(s.body):
                    break
        elif isinstance(s, ast.If):
            self.block(s.body if self.evaluate(s.test) else s.orelse)
        elif isinstance(s, ast.Break):
            raise _Break()
        elif isinstance(s, ast.Continue):
            raise _Continue()
        elif isinstance(s, ast.Return):
            raise _Return(None if s.value is None else self.evaluate(s.value))
        elif not isinstance(s, ast.Pass):  # the checker admits nothing else
            raise failed(f"{type(s).__name__} cannot run", line)

    def loop_body(self, body: list[ast.stmt]) -> bool:
        """Run one turn; True when the loop must end (`break`)."""
        try:
            self.block(body)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def augassign(self, s: ast.AugAssign, line: int | None) -> None:
        t = s.target
        if isinstance(t, ast.Name):
            current = self.lookup(t.id, line)
            self.env[t.id] = self.values.binop(s.op, current, self.evaluate(s.value), line)
            return
        assert isinstance(t, ast.Subscript)
        container, key = self.evaluate(t.value), self.evaluate(t.slice)
        current = self.values.subscript(container, key, line)
        self.values.store_item(
            container, key, self.values.binop(s.op, current, self.evaluate(s.value), line), line
        )

    def assign(self, t: ast.expr, value: Any, line: int | None) -> None:
        if isinstance(t, ast.Name):
            self.env[t.id] = value
        elif isinstance(t, (ast.Tuple, ast.List)):
            if not isinstance(value, (list, tuple, str, range)) or len(value) != len(t.elts):
                raise failed(
                    f"cannot unpack a {kind_of(value)} value into {len(t.elts)} names", line
                )
            for sub, item in zip(t.elts, value):
                self.assign(sub, item, line)
        elif isinstance(t, ast.Subscript):
            self.values.store_item(self.evaluate(t.value), self.evaluate(t.slice), value, line)
        else:
            raise failed(f"cannot assign to {type(t).__name__}", line)

    def lookup(self, name: str, line: int | None) -> Any:
        if name not in self.env:
            raise failed(f"name {describe(name)} is not defined", line)
        return self.env[name]

    # ------------------------------------------------------------ expressions

    def evaluate(self, e: ast.expr) -> Any:
        line = _line(e)
        self.meter.step(line)
        v = self.values
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return self.lookup(e.id, line)
        if isinstance(e, ast.Call):
            return self.call(e, line)
        if isinstance(e, ast.BinOp):
            return v.binop(e.op, self.evaluate(e.left), self.evaluate(e.right), line)
        if isinstance(e, ast.UnaryOp):
            return v.unary(e.op, self.evaluate(e.operand), line)
        if isinstance(e, ast.BoolOp):
            result: Any = None
            for operand in e.values:
                result = self.evaluate(operand)
                if isinstance(e.op, ast.And) != bool(result):
                    break
            return result
        if isinstance(e, ast.Compare):
            left = self.evaluate(e.left)
            for op, comp in zip(e.ops, e.comparators):
                right = self.evaluate(comp)
                if not v.compare(op, left, right, line):
                    return False
                left = right
            return True
        if isinstance(e, ast.IfExp):
            return self.evaluate(e.body) if self.evaluate(e.test) else self.evaluate(e.orelse)
        if isinstance(e, (ast.List, ast.Tuple)):
            items = [self.evaluate(x) for x in e.elts]
            return v.new(items if isinstance(e, ast.List) else tuple(items), line)
        if isinstance(e, ast.Dict):
            d: dict[Any, Any] = v.built({}, line)
            for k, val in zip(e.keys, e.values):
                if k is None:  # `**x`: refused when the plan was checked (logic.py)
                    raise failed("dict unpacking '**' is not allowed", line)
                v.store_item(d, self.evaluate(k), self.evaluate(val), line)
            return d
        if isinstance(e, ast.Subscript):
            return v.subscript(self.evaluate(e.value), self.evaluate(e.slice), line)
        if isinstance(e, ast.Slice):
            parts = [None if p is None else self.evaluate(p) for p in (e.lower, e.upper, e.step)]
            if not all(p is None or isinstance(p, int) for p in parts):
                raise failed("slice bounds must be integers", line)
            return slice(*parts)
        if isinstance(e, ast.JoinedStr):
            return self.fstring(e, line)
        if isinstance(e, ast.ListComp):
            return self.listcomp(e, line)
        raise failed(f"{type(e).__name__} cannot run", line)

    def fstring(self, e: ast.JoinedStr, line: int | None) -> str:
        pieces: list[str] = []
        size = 0
        for part in e.values:
            if isinstance(part, ast.Constant):
                text = str(part.value)
            else:
                assert isinstance(part, ast.FormattedValue)
                value = self.evaluate(part.value)
                text = value if isinstance(value, str) else self.values.render(value, line)
            size += len(text)
            self.values.fit(size, "str", line)
            pieces.append(text)
        return self.values.built("".join(pieces), line)

    def listcomp(self, e: ast.ListComp, line: int | None) -> list[Any]:
        """Bounded like loops; its names do not leak into the plan's variables (as in Python 3)."""
        names = {n.id for g in e.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        saved = {n: self.env[n] for n in names if n in self.env}
        out: list[Any] = self.values.built([], line)

        def turn(i: int) -> None:
            if i == len(e.generators):
                self.values.fit(len(out) + 1, "items", line)
                before = sys.getsizeof(out)
                out.append(self.evaluate(e.elt))
                self.values.grew(out, before, line)
                return
            g = e.generators[i]
            for item in self.values.iterate(self.evaluate(g.iter), line):
                self.meter.iteration(line)
                self.assign(g.target, item, line)
                if all(self.evaluate(c) for c in g.ifs):
                    turn(i + 1)

        try:
            turn(0)
        finally:
            for n in names:
                self.env.pop(n, None)
            self.env.update(saved)
        return out

    # ------------------------------------------------------------ calls

    def call(self, c: ast.Call, line: int | None) -> Any:
        f = c.func
        if isinstance(f, ast.Attribute):
            if f.attr == "append":
                assert isinstance(f.value, ast.Name)
                target = self.lookup(f.value.id, line)
                item = self.evaluate(c.args[0])
                if not isinstance(target, list):
                    raise failed(f"append() needs a list, got {kind_of(target)}", line)
                self.values.fit(len(target) + 1, "items", line)
                before = sys.getsizeof(target)
                target.append(item)
                self.values.grew(target, before, line)
                return None
            args = [self.evaluate(a) for a in c.args]
            return self.query(args, line) if f.attr == "query" else self.find(args, line)
        assert isinstance(f, ast.Name)
        args = [self.evaluate(a) for a in c.args]
        if f.id in BUILTINS:
            return self.values.builtin(f.id, args, line)
        return self.answer(args, line)

    def query(self, args: list[Any], line: int | None) -> Evidence | None:
        when, question, modality = args
        if not isinstance(when, (str, Span)):
            raise failed(f"video.query: time must be a string or a span, got {kind_of(when)}", line)
        if not self.times and not isinstance(when, Span):
            raise failed(f"video.query: {QUERY_NO_TIMES}", line)
        question = _str_arg("video.query", "question", question, line)
        modality = _modality("video.query", modality, line)
        shown = when.text if isinstance(when, Span) else when
        record = {"time": shown, "question": question, "modality": modality}
        return self.meter.call(
            "query",
            record,
            lambda: self.tools.query(when, question, modality),
            line,
            sent=(shown, question),
        )

    def find(self, args: list[Any], line: int | None) -> list[Span] | None:
        if not self.imperative:  # the checker refuses this already; kept as a second lock
            raise failed("video.find is not allowed in the declarative variant", line)
        description = _str_arg("video.find", "description", args[0], line)
        modality = _modality("video.find", args[1], line)
        record = {"description": description, "modality": modality}
        spans = self.meter.call(
            "find",
            record,
            lambda: self.tools.find(description, modality),
            line,
            sent=(description,),
        )
        return spans if spans is None else self.values.built(spans, line)

    def answer(self, args: list[Any], line: int | None) -> str | None:
        question = _str_arg("answer", "question", args[0], line)
        evidence = args[1]
        options = args[2] if len(args) == 3 else None
        if not isinstance(evidence, (list, tuple)):
            raise failed(f"answer: evidence must be a list, got {kind_of(evidence)}", line)
        if not all(isinstance(x, (Evidence, str)) or x is None for x in evidence):
            bad = next(x for x in evidence if not (isinstance(x, (Evidence, str)) or x is None))
            raise failed(
                f"answer: evidence items must be evidence or strings, got {kind_of(bad)}", line
            )
        items = [x for x in evidence if x is not None]  # None: a failed query, already in the trace
        if options is not None and (
            not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options)
        ):
            raise failed("answer: options must be a list of strings (or None)", line)
        opts = None if options is None else list(options)
        record = {
            "question": question,
            "evidence": [self.meter.evidence_ref(x) for x in items],
            "options": None if opts is None else list(opts),
        }
        return self.meter.call(
            "answer",
            record,
            lambda: self.tools.answer(question, items, opts),
            line,
            sent=(question, items, opts),
        )
