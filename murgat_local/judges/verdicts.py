"""The judges' verdict types: the contract between each judge prompt and the model.

Each is a pydantic model compiled into a decoding constraint by `engines.constraints`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints

from ..engines.constraints import ParseFailure, Verdict, parse_verdict


class YesNo(Verdict):
    """A binary judgment."""

    label: Literal["YES", "NO"]
    max_tokens: ClassVar[int] = 16
    yes_no: ClassVar[bool] = True  # its confidence, p_yes, is read (`engines.confidence`)

    @property
    def yes(self) -> bool:
        return self.label == "YES"


Reason = Annotated[str, StringConstraints(min_length=1, max_length=160)]


class ReasonedYesNo(Verdict):
    """A binary judgment with a short stated reason (costs more tokens than `YesNo`)."""

    reason: Reason
    label: Literal["YES", "NO"]
    max_tokens: ClassVar[int] = 256
    yes_no: ClassVar[bool] = True

    @property
    def yes(self) -> bool:
        return self.label == "YES"


FactText = Annotated[str, StringConstraints(min_length=1, max_length=120)]


class AtomicFacts(Verdict):
    """The self-contained atomic facts of one sentence."""

    facts: list[FactText] = Field(min_length=1, max_length=6)
    max_tokens: ClassVar[int] = 1024


SentenceText = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class Rewrite(Verdict):
    """One sentence, rewritten (decontextualisation)."""

    sentence: SentenceText
    max_tokens: ClassVar[int] = 512


LongText = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class RewrittenText(Verdict):
    """A whole answer, rewritten (the reference's whole-text decontextualisation)."""

    text: LongText
    max_tokens: ClassVar[int] = 2100


# ---------------------------------------------------------------- program-aided responders' tools

# A time or a span as a citation writes it: 0:05, 1:02:03, 0:05-0:12.
SpanText = Annotated[
    str, StringConstraints(pattern=r"^\d{1,2}(:\d{2}){1,2}(-\d{1,2}(:\d{2}){1,2})?$")
]


class Spans(Verdict):
    """Candidate time spans where something happens (`find`; each is verified afterwards)."""

    spans: list[SpanText] = Field(min_length=0, max_length=5)
    max_tokens: ClassVar[int] = 96


class Observation(Verdict):
    """One sentence about a cut segment (`describe`, `video.query`)."""

    sentence: SentenceText
    max_tokens: ClassVar[int] = 400  # room for the 300 characters even in short tokens


SynthesisText = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class Synthesis(Verdict):
    """The closing reasoning, citing evidence by number, and the chosen option (`synthesize`,
    `answer`)."""

    text: SynthesisText
    answer: Annotated[str, StringConstraints(pattern=r"^([A-J]|NONE)$")]
    max_tokens: ClassVar[int] = 700


VERDICT_TYPES: dict[str, type[Verdict]] = {
    t.__name__: t
    for t in (
        YesNo,
        ReasonedYesNo,
        AtomicFacts,
        Rewrite,
        RewrittenText,
        Spans,
        Observation,
        Synthesis,
    )
}

__all__ = ["ParseFailure", "Verdict", "parse_verdict", "VERDICT_TYPES"]
