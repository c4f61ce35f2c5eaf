"""The trace both plan styles execute into, and the meter that enforces their shared limits.

One `Meter` per run counts steps, iterations, allocation and tool calls, checks the clock between
steps, and makes every tool call through `call`, so the two interpreters cannot disagree on what a
call costs, how a failed one is recorded, or what the trace says.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .budget import RunBudget, text_size
from .limits import Limits, ProgramError, over_limit
from .tools import Evidence, Span, ToolError

Status = Literal["ok", "refused", "stopped", "failed", "internal"]
Clock = Callable[[], float]
SUMMARY_CHARS = 200
ARG_CHARS = 300  # a string argument is recorded up to this, with its full length noted
ARG_ITEMS = 64  # a list argument is recorded up to this many items, with the count noted
RECORD_STRING_CHARS = 2_000  # in a record over its limit, longer strings are cut to this first


def _clip(text: str, n: int = SUMMARY_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def recorded(value: Any) -> Any:
    """A tool argument as the trace keeps it: long strings and lists cut, their full size noted,
    so a plan cannot make its trace as large as what it passed."""
    if isinstance(value, str):
        return (
            value if len(value) <= ARG_CHARS else f"{value[:ARG_CHARS]}… [{len(value)} characters]"
        )
    if isinstance(value, list):
        kept = [recorded(v) for v in value[:ARG_ITEMS]]
        return kept if len(value) <= ARG_ITEMS else [*kept, f"… [{len(value)} items]"]
    return value


class ToolCrash(Exception):
    """Internal: a tool's own bug (not a `ToolError`), carried past the interpreter's safety net
    so that the entry point re-raises the original exception instead of blaming the plan."""

    def __init__(self, original: Exception) -> None:
        super().__init__(str(original))
        self.original = original


@dataclass(frozen=True)
class ToolCall:
    """One executed call, failed ones included. `args` holds JSON-able values: spans as their
    citation text, evidence as `{"call": k}` (the index of the query call that produced it)."""

    index: int  # 1-based, in execution order
    tool: str  # find | query | answer
    args: dict[str, Any]
    line: int | None
    result: str | None  # a short summary; None when the call failed
    error: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "tool": self.tool,
            "args": self.args,
            "line": self.line,
            "result": self.result,
            "error": self.error,
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True)
class Trace:
    """What a plan did: its calls in order, what it spent, under which limits, and how it ended."""

    style: str  # logic | narrative
    imperative: bool
    status: Status
    error: ProgramError | None
    calls: tuple[ToolCall, ...]
    steps: int
    iterations: int
    tool_calls: int
    seconds: float
    limits: Limits
    answer: str | None = None  # text of the last successful answer / synthesize call
    returned: str | None = None  # logic style: the plan's return value, rendered

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return {
            "style": self.style,
            "imperative": self.imperative,
            "status": self.status,
            "error": self.error.to_dict() if self.error else None,
            "calls": [c.to_dict() for c in self.calls],
            "counts": {
                "steps": self.steps,
                "iterations": self.iterations,
                "tool_calls": self.tool_calls,
                "seconds": round(self.seconds, 4),
            },
            "limits": self.limits.to_dict(),
            "answer": self.answer,
            "returned": self.returned,
        }


def refused_trace(style: str, imperative: bool, error: ProgramError, limits: Limits) -> Trace:
    """The trace of a plan that never ran."""
    return Trace(style, imperative, "refused", error, (), 0, 0, 0, 0.0, limits)


@dataclass
class Meter:
    """Counters and the call recorder of one run. Raises `ProgramStop` when a budget is spent."""

    limits: Limits
    clock: Clock = time.monotonic
    steps: int = 0
    iterations: int = 0
    allocated: int = 0
    calls: list[ToolCall] = field(default_factory=list)
    answer: str | None = None
    budget: RunBudget | None = (
        None  # the run's byte pool, shared with the plans running beside this one
    )
    worked: int = 0
    _start: float = 0.0
    _origin: dict[int, tuple[int, Evidence]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._start = self.clock()

    @property
    def seconds(self) -> float:
        return self.clock() - self._start

    def step(self, line: int | None) -> None:
        self.steps += 1
        if self.steps > self.limits.max_steps:
            raise over_limit("steps", self.limits.max_steps, "max_steps", line)
        self.tick(line)

    def tick(self, line: int | None) -> None:
        """The clock check; also called from inside long walks, so it holds within one operation."""
        if self.seconds > self.limits.max_seconds:
            raise over_limit("seconds", self.limits.max_seconds, "max_seconds", line)

    def iteration(self, line: int | None) -> None:
        self.iterations += 1
        if self.iterations > self.limits.max_iterations:
            raise over_limit("loop iterations", self.limits.max_iterations, "max_iterations", line)

    def allocate(self, size: int, line: int | None) -> None:
        """Charge `size` bytes of a value just built, to this plan and to the run's pool."""
        if self.allocated + size > self.limits.max_bytes:
            raise over_limit("bytes of values built", self.limits.max_bytes, "max_bytes", line)
        if self.budget is not None:
            self.budget.take(
                size,
                lambda: over_limit(
                    "bytes built by the run's plans together",
                    self.limits.max_run_bytes,
                    "max_run_bytes",
                    line,
                ),
            )
        self.allocated += size

    def work_left(self) -> int:
        return self.limits.max_work - self.worked

    def work(self, units: int, line: int | None) -> None:
        """Charge the elements an operation will visit, before it runs."""
        self.worked += units
        if self.worked > self.limits.max_work:
            raise over_limit(
                "elements visited by comparisons, hashing and ordering",
                self.limits.max_work,
                "max_work",
                line,
            )

    def evidence_ref(self, item: object) -> object:
        """How an evidence list item appears in a recorded `answer` call."""
        if isinstance(item, Evidence):
            origin = self._origin.get(id(item))
            return {"call": origin[0]} if origin and origin[1] is item else {"call": None}
        return item if isinstance(item, str) else str(item)

    def call(
        self,
        tool: str,
        args: dict[str, Any],
        thunk: Callable[[], Any],
        line: int | None,
        sent: tuple = (),
    ) -> Any:
        """Run one tool call; a `ToolError` is recorded and gives None. Other exceptions are bugs in
        the tool and propagate. The result's type is checked: a wrong one is a tool bug too.
        `sent` is everything the tool receives: its text must fit `max_tool_chars`."""
        if len(self.calls) >= self.limits.max_tool_calls:
            raise over_limit("tool calls", self.limits.max_tool_calls, "max_tool_calls", line)
        if text_size(sent) > self.limits.max_tool_chars:
            raise over_limit(
                "characters passed to one tool call",
                self.limits.max_tool_chars,
                "max_tool_chars",
                line,
            )
        args = {k: recorded(v) for k, v in args.items()}
        index = len(self.calls) + 1
        t0 = self.clock()
        try:
            value = thunk()
        except ToolError as e:
            self.calls.append(
                ToolCall(index, tool, args, line, None, _clip(e.reason), self.clock() - t0)
            )
            return None
        except Exception as e:
            raise ToolCrash(e) from e
        seconds = self.clock() - t0
        try:
            value, summary = _checked_result(tool, value, self.limits.max_items)
        except TypeError as e:
            raise ToolCrash(e) from e
        if isinstance(value, Evidence):
            self._origin[id(value)] = (index, value)
        if tool == "answer":
            self.answer = value
        self.calls.append(ToolCall(index, tool, args, line, summary, None, seconds))
        return value

    def trace(
        self, style: str, imperative: bool, error: ProgramError | None, returned: str | None
    ) -> Trace:
        """The run's trace; the bytes it held go back to the run's pool."""
        if self.budget is not None:
            self.budget.give_back(self.allocated)
            self.budget = None
        status: Status = "ok" if error is None else error.kind
        return Trace(
            style,
            imperative,
            status,
            error,
            tuple(self.calls),
            self.steps,
            self.iterations,
            len(self.calls),
            self.seconds,
            self.limits,
            self.answer,
            returned,
        )


def _checked_result(tool: str, value: Any, max_items: int) -> tuple[Any, str]:
    """The value a plan sees, and its summary for the trace."""
    if tool == "find":
        if not isinstance(value, (list, tuple)) or not all(isinstance(s, Span) for s in value):
            raise TypeError(f"tool find returned {type(value).__name__}, expected a list of Span")
        spans = list(value)[:max_items]
        capped = " (capped)" if len(value) > max_items else ""
        return spans, _clip(f"{len(spans)} spans{capped}: " + ", ".join(s.text for s in spans))
    if tool == "query":
        if not isinstance(value, Evidence):
            raise TypeError(f"tool query returned {type(value).__name__}, expected Evidence")
        return value, _clip(value.text)
    if not isinstance(value, str):
        raise TypeError(f"tool answer returned {type(value).__name__}, expected str")
    return value, _clip(value)


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def bounded_record(record: dict, max_chars: int) -> dict:
    """A plan's record (plan, parsed form, `Trace.to_dict()` under `"trace"`...) as JSON of at most
    `max_chars` characters; unchanged when it fits. Otherwise every string longer than
    `RECORD_STRING_CHARS` is cut to that, its length noted, then the trace's calls are dropped
    from the end, the first ones kept whole (`counts` still says how many ran), and `cut` notes
    the full size, the limit and what was cut."""
    full = _size(record)
    if full <= max_chars:
        return record
    clipped = 0

    def clip(v: Any) -> Any:
        nonlocal clipped
        if isinstance(v, str) and len(v) > RECORD_STRING_CHARS:
            clipped += 1
            return f"{v[:RECORD_STRING_CHARS]}… [{len(v)} characters]"
        if isinstance(v, dict):
            return {k: clip(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clip(x) for x in v]
        return v

    out = clip(record)
    trace = out.get("trace")
    calls = (trace.get("calls") or []) if isinstance(trace, dict) else []
    # measured with the widest count the note can hold, so the final note is no longer
    out["cut"] = note = {
        "chars": full,
        "limit": max_chars,
        "strings_clipped": clipped,
        "calls_dropped": len(calls),
    }
    kept = len(calls)
    if calls and _size(out) > max_chars:
        room = max_chars - _size({**out, "trace": {**trace, "calls": []}})
        kept = 0
        for call in calls:
            room -= _size(call) + (2 if kept else 0)  # ", " between two calls
            if room < 0:
                break
            kept += 1
        trace["calls"] = calls[:kept]
    note["calls_dropped"] = len(calls) - kept
    return out
