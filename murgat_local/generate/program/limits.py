"""Runtime limits for model-written plans, and the error value every refusal or stop becomes.

A plan is untrusted text. Every resource it can spend (steps, loop iterations, tool calls, value
sizes, bytes, the work of size-dependent operations, the text sent to a tool, nesting, source
length, wall time) has a limit here, so that the worst a hostile plan can do is end early with a
named reason, and never slow or stop another plan. The limits are configuration: a run records
the `Limits` it used in its trace, so a stopped run can be explained after the fact.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Literal

ErrorKind = Literal["refused", "stopped", "failed", "internal"]
REASON_CHARS = 300  # the longest reason kept: a last guard, messages are built short


@dataclass(frozen=True)
class Limits:
    """What one plan may spend. Defaults fit a plan of a few dozen lines and a few dozen tool calls."""

    max_source_chars: int = 20_000  # checked before parsing: a 10 MB plan is never parsed
    max_depth: int = 64  # syntax-tree nesting; guards the interpreter's own recursion
    max_steps: int = 100_000  # statements + expressions evaluated (narrative: lines run)
    max_iterations: int = 10_000  # loop iterations, all loops together (also bounds range())
    max_tool_calls: int = 64  # find + query + answer calls, failed ones included
    max_string_chars: int = 20_000  # the longest string a plan may build
    max_items: int = 1_000  # the longest list / tuple / dict a plan may build
    max_bytes: int = 32 * 2**20  # bytes of every value the plan builds, counted as built
    max_run_bytes: int = (
        2 * 2**30
    )  # all plans of a run together: at most this // max_bytes run at once
    max_work: int = 5_000_000  # elements visited by comparisons, hashing, min/max, membership
    max_value_depth: int = (
        100  # nesting of a value such an operation walks (Python's own ends near 1000)
    )
    max_tool_chars: int = 40_000  # text one tool call receives (arguments and evidence together)
    max_int_bits: int = 64  # integers larger than this stop the run (no big-number bombs)
    max_seconds: float = 600.0  # wall time, tools included, checked between steps and inside walks
    max_plan_lines: int = 32  # narrative plans: lines, synthesize included
    max_record_chars: int = (
        200_000  # a plan's record as JSON (plan, parsed form, trace); the rest is cut, noted
    )

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ProgramError:
    """Why a plan was refused (before running), stopped (a limit), failed (a runtime error), or
    ended by a bug in our own code (`internal`, never the plan's fault).

    `line` is the plan's 1-based line when one is known. `message` is the one-line form used in
    logs and traces: `stopped: line 4: more than 64 tool calls (limit max_tool_calls)`. The reason
    is cut to `REASON_CHARS`.
    """

    kind: ErrorKind
    reason: str
    line: int | None = None

    def __post_init__(self) -> None:
        if len(self.reason) > REASON_CHARS:
            object.__setattr__(self, "reason", self.reason[: REASON_CHARS - 1] + "…")

    @property
    def message(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{self.kind}: {where}{self.reason}"

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "reason": self.reason, "line": self.line}


class ProgramStop(Exception):
    """Internal: unwinds the interpreter to its entry point, where it becomes a `ProgramError`.

    Never escapes the public functions: those return the error as a value inside a trace.
    """

    def __init__(self, error: ProgramError) -> None:
        super().__init__(error.message)
        self.error = error


def over_limit(what: str, limit: int | float, name: str, line: int | None) -> ProgramStop:
    """The stop for a spent budget, worded the same way for every limit."""
    shown = f"{limit:g}" if isinstance(limit, float) else str(limit)
    return ProgramStop(ProgramError("stopped", f"more than {shown} {what} (limit {name})", line))


def failed(reason: str, line: int | None) -> ProgramStop:
    """The stop for a runtime error in the plan itself (a bad argument, division by zero...)."""
    return ProgramStop(ProgramError("failed", reason, line))


def internal(e: BaseException, line: int | None) -> ProgramError:
    """A bug in our own code, met while running a plan: its type and the place it was raised.
    Never its text: `str(KeyError(k))` is `repr(k)`, and `k` may be a plan value of any size."""
    return ProgramError("internal", f"{type(e).__name__} in the interpreter ({raised_at(e)})", line)


def raised_at(e: BaseException) -> str:
    """`file.py:line in function` of the innermost frame of `e`'s traceback."""
    tb = e.__traceback__
    if tb is None:
        return "no traceback"
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{os.path.basename(code.co_filename)}:{tb.tb_lineno} in {code.co_name}"
