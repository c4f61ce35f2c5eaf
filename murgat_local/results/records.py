"""The per-response records murgat writes: a score record (one line of `scores.jsonl`) and a
generation record (one line of a cell's `responses.jsonl`).

The models say what the writers emit, key for key: a key a writer leaves out stays out
(`Versioned.dump` writes back only the keys that were set), so a record read and written again
is the record that was read. A score record names every key it may hold; an unknown one is an
error naming it. A generation record carries the dataset row it answers as the row gives it
(whatever fields the benchmark has), so keys beyond the ones named here are kept, not refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from .versions import Versioned

# A JSON number as written: an int stays an int, a float a float (a round trip keeps the text).
Number = int | float


class Part(BaseModel):
    """A sub-object of a record: every key named, none other accepted."""

    model_config = ConfigDict(extra="forbid")


class Verdict(Part):
    """One judge's answer to one call, as the record's trace keeps it."""

    value: Any = None  # yes/no: a bool; a structured verdict: its object; null: no verdict
    p_yes: Number | None = None
    p_yes_unknown: str | None = None  # why `p_yes` is null
    raw: str | None = None
    unparsed: str | None = None
    error: str | None = None
    note: str | None = None
    thought_cut: bool | None = None
    reached: dict[str, Any] | None = None  # prompt tokens per media modality that reached it
    reached_unknown: str | None = None
    panel: dict[str, Any] | None = None  # a panel's tally, its members' verdicts in `members`
    decided_by: str | None = None  # an escalation: the judge whose verdict decided
    abstained: bool | None = None
    cascade: list[dict[str, Any]] | None = None  # an escalation: each judge asked, its verdict
    rejected: str | None = None  # a decontextualization not used, and why

    @property
    def yes(self) -> bool | None:
        """The yes/no answer; None when there is none (no verdict, or not a yes/no verdict)."""
        return self.value if isinstance(self.value, bool) else None


class CitationRecord(Part):
    raw: str | None = None
    modality: str | None = None
    start: Number | None = None
    end: Number | None = None
    error: str | None = None
    usable: bool | None = None
    issue: str | None = None
    extracted: bool | None = None


class FactRecord(Part):
    text: str | None = None
    precision: Number | None = None
    recall: Number | None = None
    unscored: str | None = None
    precise: list[bool | None] | None = None  # per citation: whether it made the fact precise
    joint: Verdict | None = None
    alone: dict[str, Verdict | None] | None = None  # by citation index (0-based, as text)
    without: dict[str, Verdict | None] | None = None


class SentenceRecord(Part):
    text: str | None = None
    judged_text: str | None = None
    citations: list[CitationRecord] | None = None
    verifiable: Verdict | None = None
    unscored: str | None = None
    decontext: Verdict | None = None
    decomposition: Verdict | None = None
    facts: list[FactRecord] | None = None


class Trace(Part):
    text: str | None = None
    text_decontext: Verdict | None = None
    text_note: str | None = None
    text_given: bool | None = None
    sentences: list[SentenceRecord] | None = None


class AnswerCheck(Part):
    predicted: str | None = None
    gold: str | None = None


class ScoreRecord(Versioned):
    """A line of scores.jsonl: one response `murgat score` judged.

    Status "ok" where it was scored, "error" (with the reason) where it could not be."""

    index: int | None = None
    id: str | int | None = None  # murgat writes text; a hand-built file may number them
    status: str = "ok"
    error: str | None = None
    source: str | None = None  # where the response was in the input: "line 3", "item 2"
    video: str | None = None
    model: str | None = None
    benchmark: str | None = None
    categories: dict[str, Any] | None = None
    question_type: str | None = None
    mode: str | None = None
    coverage: Number | None = None
    precision: Number | None = None
    recall: Number | None = None
    f1: Number | None = None
    murgat_s: Number | None = None
    note: str | None = None
    scored_fraction: Number | None = None
    counts: dict[str, int] | None = None
    answer: AnswerCheck | None = None
    correct: bool | None = None
    trace: Trace | None = None
    reference_response_score: Any = None  # a reference entry rescored: its own score


class GenerationRecord(Versioned):
    """A line of a cell's responses.jsonl (`murgat generate`).

    One answer (status "error": it could not be made). The dataset row it answers is kept beside it, the row's own fields as they are."""

    model_config = ConfigDict(extra="allow")

    id: str | int | None = None  # murgat writes text; a hand-built file may number them
    model: str | None = None  # the cell: "model/strategy"
    strategy: str | None = None
    sample: int | None = None
    status: str = "ok"
    error: str | None = None
    source: str | None = None
    video: str | None = None
    question: str | None = None
    options: list[Any] | None = None
    answer: Any = None
    answer_raw: Any = None
    question_type: str | None = None
    categories: dict[str, Any] | None = None
    benchmark: str | None = None
    images: list[Any] | None = None
    media: dict[str, Any] | None = None  # what the responder was given and what reached it
    posthoc: dict[str, Any] | None = None
    program: dict[str, Any] | None = None
    model_generation: str | None = None
    answer_path: str | None = None
    predicted: str | None = None
    gold: Any = None  # the dataset's answer, as the dataset gives it
    correct: bool | None = None
    unanswered: str | None = None
