"""The tools a plan may call, as a protocol the engines implement.

Plans never see an engine: they call `find`, `query` and `answer` through the interpreter, which
checks argument types, counts and records every call, and turns a `ToolError` into a recorded
failed call. Tool results are opaque to a plan: it can store, count and pass them on, never read
their fields (the interpreter has no attribute access to read them with).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ...text.citations import format_time

MODALITIES = ("visual", "audio")


# Span text is citation text: the same formatter the evidence descriptions use, read back by
# `text.citations.parse_time`.
format_seconds = format_time


@dataclass(frozen=True)
class Span:
    """A stretch of the video, in seconds, as `find` confirms it; `str()` gives citation text."""

    start: float
    end: float

    @property
    def text(self) -> str:
        if self.start == self.end:
            return format_seconds(self.start)
        return f"{format_seconds(self.start)}-{format_seconds(self.end)}"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, eq=False)
class Evidence:
    """One observation `query` made about a cut span. Compared by identity: a plan learns
    nothing about its text by comparing two evidence values."""

    text: str
    time: str  # the span as cited, e.g. "0:12-0:15"
    modality: str

    def __str__(self) -> str:
        return "<evidence>"


Time = str | Span
EvidenceItem = Evidence | str


class ToolError(Exception):
    """A tool's refusal or failure (a bad timestamp, a path outside the media root, an engine
    error). The interpreter records it as a failed call and the plan goes on with `None`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class Tools(Protocol):
    """What the engines provide. Arguments arrive type-checked; `time` is passed on unchanged
    (a tool must validate it: it is model-written text)."""

    def find(self, description: str, modality: str) -> Sequence[Span]:
        """Confirmed spans where `description` is seen (visual) or heard (audio)."""
        ...

    def query(self, time: Time, question: str, modality: str) -> Evidence:
        """One observation answering `question` about the cut span `time`."""
        ...

    def answer(self, question: str, evidence: list[EvidenceItem], options: list[str] | None) -> str:
        """The final answer text, synthesised from `evidence` (notes may be plain strings)."""
        ...
