"""Program-aided responders: run a model-written plan for a video question with our own tools.

Two plan styles, each declarative (the plan names timestamps) or imperative (it may `find` them):

  logic      a small Python-like program, parsed to a syntax tree, checked against a whitelist,
             and walked by our interpreter (`parse_logic`, `run_logic`, `run_logic_source`)
  narrative  numbered call lines, constrained by one regex (`narrative_regex`, `parse_narrative`,
             `run_narrative`, `run_narrative_source`)

Model-written code is never compiled, `exec`'d or `eval`'d. Both styles spend the same `Limits`
and produce the same `Trace`; the engines plug in through the `Tools` protocol.
"""

from .interpreter import run_logic, run_logic_source
from .limits import Limits, ProgramError
from .logic import LogicPlan, parse_logic
from .narrative import (
    MAX_ARG_CHARS,
    NarrativePlan,
    NarrativeStep,
    check_narrative,
    narrative_regex,
    parse_narrative,
    run_narrative,
    run_narrative_source,
)
from .tools import MODALITIES, Evidence, Span, ToolError, Tools, format_seconds
from .trace import ToolCall, Trace, refused_trace

__all__ = [
    "Evidence",
    "Limits",
    "LogicPlan",
    "MAX_ARG_CHARS",
    "MODALITIES",
    "NarrativePlan",
    "NarrativeStep",
    "ProgramError",
    "Span",
    "ToolCall",
    "ToolError",
    "Tools",
    "Trace",
    "check_narrative",
    "format_seconds",
    "narrative_regex",
    "parse_logic",
    "parse_narrative",
    "refused_trace",
    "run_logic",
    "run_logic_source",
    "run_narrative",
    "run_narrative_source",
]
