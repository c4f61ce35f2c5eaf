"""Narrative-style plans: numbered call lines, one regular expression, one parser, one runner.

    1. find("the man picks up the cup", "visual")
    2. describe(#1, "visual", "What colour is the cup?")
    3. describe("0:12-0:15", "audio", "What does the woman say?")
    4. synthesize("Which option fits the evidence? Cite it by number.")

`narrative_regex` is for grammar-constrained decoding, so it uses plain features only (no
lookarounds, no backreferences, every repetition bounded). The parser is built from the same
pieces and checks the same things, so it accepts exactly what the regex accepts (tested).

`allow_times=False` (imperative plans only) drops literal timestamps from describe: every describe
must then name an earlier line, as the imperative prompts ask ("do not write times yourself").

Where the brief said `#k` must name an earlier *find*, a regex cannot know which earlier lines
were finds without listing every combination; so `#k` names any earlier step, and means the spans
that step produced: the spans a find confirmed, or the spans a describe described.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal

from ...text.citations import parse_time
from .limits import Limits, ProgramError, ProgramStop, internal
from .tools import Evidence, Span, Time, Tools
from .trace import Clock, Meter, ToolCrash, Trace, refused_trace

MAX_ARG_CHARS = 160  # a description or an instruction is one sentence; shorter strings keep plans (and their grammar) small
_CHAR = r'(?:[^"\\\n]|\\["\\])'
_STR = rf'"{_CHAR}{{1,{MAX_ARG_CHARS}}}"'
_MOD = r'"(?:visual|audio)"'
_TIME = r"[0-9]{1,2}:[0-5][0-9](?::[0-5][0-9])?"
_STAMP = rf'"{_TIME}(?:-{_TIME})?"'
_SEP = ", ?"
_SYN = rf"synthesize\({_STR}\)"
_FIND = rf"find\({_STR}{_SEP}{_MOD}\)"

_FIND_RE = re.compile(rf"find\((?P<q>{_STR}){_SEP}(?P<m>{_MOD})\)")
_DESC_RE = re.compile(
    rf"describe\((?:(?P<t>{_STAMP})|#(?P<ref>[1-9][0-9]{{0,3}})){_SEP}(?P<m>{_MOD}){_SEP}(?P<q>{_STR})\)"
)
_SYN_RE = re.compile(rf"synthesize\((?P<q>{_STR})\)")
_UNESCAPE = re.compile(r'\\(["\\])')

Tool = Literal["find", "describe", "synthesize"]


@dataclass(frozen=True)
class NarrativeStep:
    number: int  # its line, 1-based
    tool: Tool
    text: str  # find: the description; describe / synthesize: the instruction
    modality: str | None = None
    timestamps: str | None = None  # describe: citation-format text, or None with `ref`
    ref: int | None = None  # describe(#k, ...): the earlier step whose spans it describes


@dataclass(frozen=True)
class NarrativePlan:
    steps: tuple[NarrativeStep, ...]
    imperative: bool


def _describe(line: int, times: bool) -> str | None:
    refs = "|".join(str(k) for k in range(1, line))
    choices = ([_STAMP] if times else []) + ([f"#(?:{refs})"] if refs else [])
    if not choices:
        return None  # line 1 of a plan that may name no times: nothing to describe yet
    return rf"describe\((?:{'|'.join(choices)}){_SEP}{_MOD}{_SEP}{_STR}\)"


def narrative_regex(
    imperative: bool, max_steps: int = Limits().max_plan_lines, allow_times: bool = True
) -> str:
    """One regex admitting exactly the well-formed plans of at most `max_steps` lines.

    Lines are numbered 1, 2, ... in order; the last and only the last is `synthesize`; `#k` names
    an earlier line. Built inside out, so its size grows linearly with `max_steps`."""
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    tail = rf"{max_steps}\. {_SYN}"
    for i in range(max_steps - 1, 0, -1):
        describe = _describe(i, allow_times or not imperative)
        step = _FIND if describe is None else f"(?:{_FIND}|{describe})" if imperative else describe
        tail = rf"{i}\. (?:{_SYN}|{step}\n{tail})"
    return tail + r"\n?"


def _unquote(quoted: str) -> str:
    return _UNESCAPE.sub(r"\1", quoted[1:-1])


def parse_narrative(
    text: str, imperative: bool, max_steps: int = Limits().max_plan_lines, allow_times: bool = True
) -> NarrativePlan | ProgramError:
    """The plan, or a refusal naming the first bad line. Accepts what `narrative_regex` accepts."""
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        return ProgramError("refused", "plan is empty")
    if text.count("\n") + 1 > max_steps:
        return ProgramError(
            "refused", f"plan has more than {max_steps} lines (limit max_plan_lines)"
        )
    lines = text.split("\n")
    steps: list[NarrativeStep] = []
    for i, raw in enumerate(lines, start=1):
        step = _parse_line(i, raw, imperative, allow_times or not imperative)
        if isinstance(step, ProgramError):
            return step
        last = i == len(lines)
        if last and step.tool != "synthesize":
            return ProgramError("refused", "the last line must be synthesize(...)", i)
        if not last and step.tool == "synthesize":
            return ProgramError(
                "refused", "synthesize(...) must be the last line, and the only one", i
            )
        steps.append(step)
    return NarrativePlan(tuple(steps), imperative)


def _parse_line(i: int, raw: str, imperative: bool, times: bool) -> NarrativeStep | ProgramError:
    prefix = f"{i}. "
    if not raw.startswith(prefix):
        return ProgramError("refused", f"line {i} must start with '{prefix}'", i)
    body = raw[len(prefix) :]
    if m := _SYN_RE.fullmatch(body):
        return NarrativeStep(i, "synthesize", _unquote(m["q"]))
    if m := _FIND_RE.fullmatch(body):
        if not imperative:
            return ProgramError(
                "refused", "find is not allowed in the declarative variant (name the timestamps)", i
            )
        return NarrativeStep(i, "find", _unquote(m["q"]), _unquote(m["m"]))
    if m := _DESC_RE.fullmatch(body):
        mod, instruction = _unquote(m["m"]), _unquote(m["q"])
        if m["ref"] is not None:
            k = int(m["ref"])
            if not 1 <= k < i:
                return ProgramError("refused", f"#{k} must name an earlier line", i)
            return NarrativeStep(i, "describe", instruction, mod, None, k)
        if not times:
            return ProgramError(
                "refused",
                "name no times yourself in the imperative variant: describe what an earlier find located",
                i,
            )
        stamp = _unquote(m["t"])
        for end in stamp.split("-"):
            if parse_time(end)[1] is not None:  # the regex already ensures M:SS / H:MM:SS
                return ProgramError("refused", f"malformed timestamp {stamp!r}", i)
        return NarrativeStep(i, "describe", instruction, mod, stamp)
    head = body.split("(", 1)[0][:40]
    if head in ("find", "describe", "synthesize"):
        return ProgramError("refused", f"malformed arguments to {head}(...)", i)
    return ProgramError(
        "refused", f"expected find(...), describe(...) or synthesize(...), got {head!r}", i
    )


def run_narrative(
    plan: NarrativePlan,
    tools: Tools,
    limits: Limits = Limits(),
    options: list[str] | None = None,
    clock: Clock = time.monotonic,
) -> Trace:
    """Run the lines in order. `describe` queries each span of its target (none if a find found
    none or failed); `synthesize` answers from all evidence gathered, in order, with `options`."""
    meter = Meter(limits, clock)
    spans_of: dict[int, list[Time]] = {}
    evidence: list[Evidence] = []
    error: ProgramError | None = None
    step: NarrativeStep | None = None
    try:
        for step in plan.steps:
            meter.step(step.number)
            if step.tool == "find":
                spans_of[step.number] = _find(meter, tools, step)
            elif step.tool == "describe":
                targets: list[Time] = (
                    [step.timestamps] if step.timestamps is not None else spans_of[step.ref or 0]
                )
                for when in targets:
                    meter.iteration(step.number)
                    ev = _query(meter, tools, step, when)
                    if ev is not None:
                        evidence.append(ev)
                spans_of[step.number] = targets
            else:
                _synthesize(meter, tools, step, evidence, options)
    except ProgramStop as stop:
        error = stop.error
    except ToolCrash as crash:
        raise crash.original from None
    except Exception as e:  # a bug in this runner, never the plan's fault
        error = internal(e, None if step is None else step.number)
    return meter.trace("narrative", plan.imperative, error, None)


def run_narrative_source(
    text: str,
    tools: Tools,
    imperative: bool,
    limits: Limits = Limits(),
    options: list[str] | None = None,
    clock: Clock = time.monotonic,
    allow_times: bool = True,
) -> Trace:
    """Parse and run; a refused plan gives a trace with no calls."""
    plan = check_narrative(text, imperative, limits, allow_times)
    if isinstance(plan, ProgramError):
        return refused_trace("narrative", imperative, plan, limits)
    return run_narrative(plan, tools, limits, options, clock)


def check_narrative(
    text: str, imperative: bool, limits: Limits = Limits(), allow_times: bool = True
) -> NarrativePlan | ProgramError:
    """`parse_narrative` under `limits` (source length, lines)."""
    if len(text) > limits.max_source_chars:
        return ProgramError(
            "refused",
            f"plan is {len(text)} characters, more than {limits.max_source_chars} (limit max_source_chars)",
        )
    return parse_narrative(text, imperative, limits.max_plan_lines, allow_times)


def _find(meter: Meter, tools: Tools, step: NarrativeStep) -> list[Time]:
    description, modality = step.text, step.modality or ""
    record = {"description": description, "modality": modality}
    found = meter.call(
        "find", record, lambda: tools.find(description, modality), step.number, sent=(description,)
    )
    return list(found or [])


def _query(meter: Meter, tools: Tools, step: NarrativeStep, when: Time) -> Evidence | None:
    question, modality = step.text, step.modality or ""
    shown = when.text if isinstance(when, Span) else when
    record = {"time": shown, "question": question, "modality": modality}
    return meter.call(
        "query",
        record,
        lambda: tools.query(when, question, modality),
        step.number,
        sent=(shown, question),
    )


def _synthesize(
    meter: Meter,
    tools: Tools,
    step: NarrativeStep,
    evidence: list[Evidence],
    options: list[str] | None,
) -> None:
    items: list = list(evidence)
    opts = None if options is None else list(options)
    record = {
        "question": step.text,
        "evidence": [meter.evidence_ref(x) for x in items],
        "options": None if opts is None else list(opts),
    }
    meter.call(
        "answer",
        record,
        lambda: tools.answer(step.text, items, opts),
        step.number,
        sent=(step.text, items, opts),
    )
