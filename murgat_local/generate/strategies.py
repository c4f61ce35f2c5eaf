"""Responder strategies: what a model under test is asked, and how a post-hoc edit is checked.

base      answer with step-by-step reasoning, no citations
cite      the same, every observable sentence cited (+CITATION)
posthoc   an editor pass that adds, repairs and moves citations in an existing answer
          (`posthoc` edits this run's `base` answer, `posthoc:cite` its `cite` answer, and with
          `--from FILE` the answers in that file); the prose must come back unchanged
program:STYLE-VARIANT
          program-aided: the model writes a plan (STYLE `logic`: a small Python-like program;
          `narrative`: numbered tool calls), our interpreter runs it with tools backed by the
          same engine, and the response is rendered from the calls that ran (VARIANT
          `declarative`: the plan names its times; `imperative`: it must find them)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.citations import strip_citations
from ..text.clean import remove_thinking

PROMPTS = {"base": "respond_base", "cite": "respond_cite", "posthoc": "posthoc_attribution"}
POSTHOC_SOURCES = ("base", "cite", "from")
PROGRAM_VARIANTS = (
    "logic-imperative",
    "logic-declarative",
    "narrative-imperative",
    "narrative-declarative",
)
CHOICES = "base, cite, posthoc, posthoc:cite, " + ", ".join(
    f"program:{v}" for v in PROGRAM_VARIANTS
)


@dataclass(frozen=True)
class Strategy:
    name: str  # base | cite | posthoc | program
    source: str | None = None  # posthoc: which answers it edits; program: its variant

    @property
    def label(self) -> str:
        if self.name == "program" or (self.name == "posthoc" and self.source not in (None, "base")):
            return f"{self.name}:{self.source}"
        return self.name

    @property
    def program(self) -> str:
        """A program strategy's variant (`logic-declarative`, ...): every program has one."""
        if self.name != "program" or self.source is None:
            raise ValueError(f"{self.label} is not a program strategy with a variant")
        return self.source

    @property
    def prompt(self) -> str:
        if self.name == "program":
            return "program_" + self.program.replace("-", "_")
        return PROMPTS[self.name]

    @property
    def style(self) -> str | None:
        """program: `logic` or `narrative`."""
        return self.program.split("-")[0] if self.name == "program" else None

    @property
    def imperative(self) -> bool:
        return self.name == "program" and self.program.endswith("-imperative")


def parse_strategy(text: str, *, from_file: bool = False) -> Strategy:
    """`base`, `cite`, `posthoc` or `posthoc:cite`; ValueError naming the choices otherwise."""
    name, _, arg = text.strip().partition(":")
    if name == "program":
        if arg not in PROGRAM_VARIANTS:
            raise ValueError(
                f"program strategies are {', '.join('program:' + v for v in PROGRAM_VARIANTS)}; not {text!r}"
            )
        return Strategy("program", arg)
    if name not in PROMPTS:
        raise ValueError(f"unknown strategy {text!r} (choose from {CHOICES})")
    if name != "posthoc":
        if arg:
            raise ValueError(f"strategy {name!r} takes no argument")
        return Strategy(name)
    source = "from" if from_file else (arg or "base")
    if source not in POSTHOC_SOURCES or (arg and from_file):
        raise ValueError(
            f"posthoc edits 'base' or 'cite' answers of this run, or a --from file; not {arg!r}"
        )
    return Strategy("posthoc", source)


def option_letters(options) -> tuple[str, ...]:
    return tuple(chr(65 + i) for i in range(len(options or ())))


_SPACE = re.compile(r"\s+")


def prose(text: str) -> str:
    """An answer's words without its citations, thinking, or spacing differences."""
    body = remove_thinking(text)
    return _SPACE.sub(" ", strip_citations(body)).strip()


def posthoc_problem(original: str, edited: str) -> str | None:
    """Why a post-hoc edit is rejected (None when accepted): it may only touch citations."""
    if not remove_thinking(edited).strip():
        return "the edit is empty"
    before, after = prose(original), prose(edited)
    if before == after:
        return None
    # Name the first difference, so a reader sees what the editor changed.
    i = next(
        (k for k, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after))
    )
    return (
        f"the edit changed the prose, not only citations (first difference at character {i}: "
        f"{before[i : i + 40]!r} became {after[i : i + 40]!r})"
    )
