"""The protocol's working state for one response: its sentences, citations, facts and verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..grading import FactScore, ResponseScore, SentenceScore
from ..inputs.responses import ResponseItem
from ..media.source import MediaRef
from ..text.citations import Citation
from .judging import Outcome

REFERENCE = "reference"


@dataclass
class FactState:
    text: str
    joint: Outcome | None = None
    alone: dict[int, Outcome] = field(default_factory=dict)
    without: dict[int, Outcome] = field(default_factory=dict)
    score: FactScore | None = None


@dataclass
class SentenceState:
    original: str
    text: str  # what the judges read: citations removed, decontextualized in default mode
    citations: list[Citation]
    issues: list[str | None]  # per citation: why it cannot be checked (None = usable)
    extracted: list[bool]  # reference mode: False when the segment could not be cut
    # Default mode: bracketed text that looks like a citation and was not read as one.
    unparsed_citations: list[str] = field(default_factory=list)
    decontext: Outcome | None = None
    decontext_note: str | None = None
    verifiable: Outcome | None = None
    decomposition: Outcome | None = None
    facts: list[FactState] = field(default_factory=list)
    unscored: str | None = None  # why the facts are unknown
    score: SentenceScore | None = None

    @property
    def is_verifiable(self) -> bool | None:
        if self.verifiable is None or not self.verifiable.ok:
            return None
        return self.verifiable.yes

    @property
    def usable(self) -> list[bool]:
        return [i is None for i in self.issues]


@dataclass
class ResponseState:
    item: ResponseItem
    source: MediaRef | None = None
    error: str | None = None
    reasoning: str = ""
    answer_letter: str | None = None
    decontext_text: Outcome | None = None
    text_note: str | None = None
    given_text: str | None = None  # reference mode: the input's own decontextualized_text
    sentences: list[SentenceState] = field(default_factory=list)
    score: ResponseScore | None = None

    @property
    def video(self) -> MediaRef:
        """The response's video, resolved when it is prepared (before any citation is read)."""
        if self.source is None:
            raise ValueError(f"response {self.item.id!r}: its video is not resolved")
        return self.source


@dataclass(frozen=True)
class ProtocolOptions:
    compat: str | None = None  # None (default mode) or "reference"
    decontextualize: bool = True
    # Reference mode only: the reference's `--parse_reasoning` (judge the extracted reasoning);
    # without it the reference judges the whole generation, labels and thinking included.
    parse_reasoning: bool = False

    @property
    def reference(self) -> bool:
        return self.compat == REFERENCE
