"""Program-aided cells of `murgat generate`: run each item's plan against the video tools.

The plan itself is generated with the other first answers (the narrative style under its
grammar); here every plan of a chunk is parsed, checked and interpreted, each in its own
thread, while their tool calls go to the engine in rounds (`rounds.RoundBatcher`) through the
same cache as every other call. The response is then written from the calls that ran.

A row's error starts with a fixed phrase per outcome (`PROBLEMS`), which `outcome` reads back for
the run summary: a bug in our own code (the interpreter, a tool, this module) is `internal`, never
counted as the plan's failure.
"""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..engines import Sampling
from ..generate.media import ResponderPlan
from ..generate.program import (
    Limits,
    LogicPlan,
    NarrativePlan,
    ProgramError,
    Trace,
    check_narrative,
    narrative_regex,
    parse_logic,
    refused_trace,
    run_logic,
    run_narrative,
)
from ..generate.program.budget import RunBudget
from ..generate.program.limits import raised_at
from ..generate.program.render import render_response
from ..generate.program.trace import bounded_record
from ..generate.program.values import error_text
from ..generate.program_tools import VideoTools
from ..generate.strategies import Strategy
from ..judges import PromptTemplate
from ..judges.calls import Outcome
from ..media.segments import SegmentCutter
from ..media.source import MediaRef
from ..results import GenerationRecord
from ..text.clean import remove_thinking
from .judging import StageJudge
from .rounds import RoundBatcher

_FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)(?:```|$)", re.S)

# How a program row's error begins, per outcome (read back by `outcome`).
PROBLEMS = {
    "refused": "the program was refused",
    "stopped": "the program was stopped",
    "failed": "the program failed",
    "internal": "an internal error stopped the program",
    "no_answer": "the program ended without an answer",
}
OUTCOMES = ("ok", *PROBLEMS, "not_run")


def plan_pattern(strategy: Strategy, limits: Limits) -> str | None:
    """The grammar a narrative plan is generated under (None: a logic plan is free text)."""
    if strategy.style != "narrative":
        return None
    return narrative_regex(
        strategy.imperative, limits.max_plan_lines, allow_times=not strategy.imperative
    )


def plan_source(raw: str) -> str:
    """The program in a generation: thinking removed, and the inside of a code fence if any."""
    text = remove_thinking(raw)
    m = _FENCE.search(text)
    return (m.group(1) if m else text).strip("\n")


@dataclass
class ProgramJob:
    key: tuple
    strategy: Strategy
    plan: Outcome
    ref: MediaRef
    media: ResponderPlan
    question: str
    options: list[str]
    sampling: Sampling


@dataclass
class ProgramResult:
    """One executed plan: the response written from it, or why there is none, and the record."""

    response: str | None
    error: str | None
    record: dict = field(default_factory=dict)


def execute(
    jobs: Sequence[ProgramJob],
    judge: StageJudge,
    cutter: SegmentCutter,
    prompts: dict[str, PromptTemplate],
    limits: Limits,
) -> dict[tuple, ProgramResult]:
    """Run every job's plan; tool calls of all jobs are batched round by round."""

    def job_fn(job: ProgramJob):
        def run(ask) -> ProgramResult:
            return _run_one(job, ask, cutter, prompts, limits, budget)

        return run

    budget = RunBudget(limits.max_run_bytes, limits.max_bytes)
    batcher: RoundBatcher[ProgramResult] = RoundBatcher(judge.run, max_live=budget.concurrent)
    results = batcher.run([job_fn(j) for j in jobs])
    out = {}
    for job, res in zip(jobs, results):
        if isinstance(
            res, BaseException
        ):  # a fault in our own code (a tool's, this module's) stays with its item
            why = f"internal: {error_text(res)}; raised at {raised_at(res)}"
            res = ProgramResult(None, f"{PROBLEMS['internal']} ({why})")
        out[job.key] = res
    return out


def _run_one(
    job: ProgramJob, ask, cutter, prompts, limits: Limits, budget: RunBudget
) -> ProgramResult:
    source = plan_source(job.plan.raw)
    record: dict = {"style": job.strategy.style, "variant": job.strategy.source, "plan": source}
    tools = VideoTools(
        ask, cutter, job.ref, job.media, prompts, job.sampling, job.question, job.options
    )
    t0 = time.monotonic()
    style, imperative = job.strategy.style, job.strategy.imperative
    if style is None:
        raise ValueError(f"{job.strategy.label} is not a program strategy")
    plan: LogicPlan | NarrativePlan | ProgramError
    if style == "logic":
        plan = parse_logic(source, imperative, limits, allow_times=not imperative)
    else:
        plan = check_narrative(source, imperative, limits, allow_times=not imperative)
    if isinstance(plan, ProgramError):
        trace = refused_trace(style, imperative, plan, limits)
    elif isinstance(plan, LogicPlan):
        trace = run_logic(plan, tools, limits, clock=tools.clock, budget=budget)
    else:
        trace = run_narrative(plan, tools, limits, options=job.options, clock=tools.clock)
    wall = time.monotonic() - t0
    record["parsed"] = parsed_form(plan)
    record["trace"] = trace.to_dict()
    record["time"] = {
        "wall_s": round(wall, 4),
        "model_s": round(tools.waited, 4),
        "interpreter_s": round(max(wall - tools.waited, 0.0), 4),
    }
    record = bounded_record(record, limits.max_record_chars)
    error = _problem(trace, tools)
    if error is None and tools.synthesis is not None:
        return ProgramResult(render_response(tools.observations, tools.synthesis), None, record)
    return ProgramResult(None, error, record)


def parsed_form(plan):
    """The checked plan as the interpreter saw it: a logic program's statements written back from
    its syntax tree, or a narrative plan's steps (None when the plan was refused)."""
    if isinstance(plan, LogicPlan):
        return "\n".join(ast.unparse(stmt) for stmt in plan.body)
    if isinstance(plan, NarrativePlan):
        return [asdict(step) for step in plan.steps]
    return None


def _problem(trace: Trace, tools: VideoTools) -> str | None:
    if trace.error is not None:
        return f"{PROBLEMS[trace.error.kind]} ({trace.error.message})"
    if tools.synthesis is None:
        return f"{PROBLEMS['no_answer']} (no successful answer/synthesize call)"
    return None


def outcome(status: str, error: str | None) -> str:
    """A program row's outcome, one of `OUTCOMES`, from its status and error: `not_run` when the
    plan never reached the interpreter (it could not be written, the item had no media...)."""
    if status == "ok":
        return "ok"
    return next(
        (kind for kind, phrase in PROBLEMS.items() if (error or "").startswith(phrase + " (")),
        "not_run",
    )


def outcome_counts(rows: Sequence[GenerationRecord]) -> dict[str, int]:
    """How many rows of a program cell ended each way (every kind of `OUTCOMES`, zeros included)."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in rows:
        counts[outcome(r.status, r.error)] += 1
    return counts
