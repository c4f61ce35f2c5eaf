"""The per-response records murgat writes: a score record (one line of `scores.jsonl`) and a
generation record (one line of a cell's `responses.jsonl`).

The models say what the writers emit, key for key: a key a writer leaves out stays out
(`Versioned.dump` writes back only the keys that were set), so a record read and written again
is the record that was read. A score record names every key it may hold; an unknown one is an
error naming it. A generation record carries the dataset row it answers as the row gives it
(whatever fields the benchmark has), so keys beyond the ones named here are kept, not refused.

Every model is strict (`Versioned`): a string is never read as a number nor "yes" as a boolean,
and each value keeps to the bounds its definition gives (a score in [0, 1], a count >= 0).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict

from .fields import (
    CitedTime,
    Count,
    IndexKey,
    Label,
    Mode,
    NonNegative,
    Part,
    QuestionType,
    Score,
    Status,
    d,
    many,
)
from .generation_blocks import MediaGiven, PosthocEdit, ProgramRecord
from .versions import Versioned


class Verdict(Part):
    """One judge's answer to one call, as the record's trace keeps it."""

    value: bool | dict[str, Any] | None = d(
        description="the verdict: true/false for a yes/no question, the structured answer "
        "(an object) for the others, null when there is none"
    )
    p_yes: Score | None = d(description="the judge's probability of YES (yes/no verdicts)")
    p_yes_unknown: str | None = d(description="why `p_yes` is null")
    raw: str = d("", "the judge's text as it came back")
    unparsed: str | None = d(description="why the text could not be read as a verdict")
    error: str | None = d(description="why the call got no answer (refused, failed)")
    note: str | None = d(description="what the engine changed to fit the request")
    thought_cut: bool | None = d(
        description="a thinking judge's thought reached its budget and was closed"
    )
    reached: dict[str, Count] | None = d(
        description="prompt tokens per media modality that reached the judge"
    )
    reached_unknown: str | None = d(description="why `reached` could not be counted")
    panel: Panel | None = d(description="a panel's vote, each member's own verdict in `members`")
    decided_by: str | None = d(
        description="an escalation: the judge whose verdict decided (null: all abstained)"
    )
    abstained: bool | None = d(description="an escalation where no judge's verdict stood")
    cascade: list[CascadeStep] = many(
        list, "an escalation: each judge asked, in order, with its verdict"
    )
    rejected: str | None = d(description="a decontextualization not used, and why")

    @property
    def yes(self) -> bool | None:
        """The yes/no answer; None when there is none (no verdict, or not a yes/no verdict)."""
        return self.value if isinstance(self.value, bool) else None


class Panel(Part):
    """How a panel of judges voted on one call."""

    vote: str | None = d(description="the rule: majority, weighted, unanimous or any")
    decision: Literal["YES", "NO"] | None = d(description="the panel's answer (null: no vote)")
    yes: Count | None = d(description="members that said YES")
    no: Count | None = d(description="members that said NO")
    dropped: Count | None = d(description="members without a verdict (out of the vote)")
    tie: bool | None = d(description="the vote was tied (decided NO)")
    weight_yes: NonNegative | None = d(description="weighted vote: the weight of YES")
    weight_no: NonNegative | None = d(description="weighted vote: the weight of NO")
    weights: dict[str, NonNegative] = many(dict, "weighted vote: each member's weight")
    weights_from: str | None = d(description="weighted vote: where the weights were read")
    vote_share: Score | None = d(description="the share of the vote that said YES")
    p_yes_mean: Score | None = d(description="the voting members' mean p_yes")
    members: dict[str, Verdict] = many(dict, "each member's own verdict")


class CascadeStep(Verdict):
    """One judge an escalation asked: its certified threshold and its verdict."""

    judge: str | None = d(description="the judge asked")
    threshold: Score | None = d(
        description="the confidence its verdict needed to stand (null: nothing certified)"
    )
    certain: bool | None = d(description="its verdicts stand by construction (human labels)")


class CitationRecord(Part):
    """One citation of a sentence and whether it could be checked against the media."""

    raw: str = d("", "the citation as written, e.g. `(visual, 0:12)`")
    modality: str = d("", "visual or audio (another word: an unknown modality)")
    start: CitedTime | None = d(
        description="start of the cited segment, in seconds (-1: reference mode, unreadable)"
    )
    end: CitedTime | None = d(
        description="end of the cited segment, in seconds (-1: reference mode, unreadable)"
    )
    error: str | None = d(description="why the citation could not be read (a malformed time)")
    usable: bool | None = d(description="whether it could be checked against the media")
    issue: str | None = d(description="why it could not be checked (null: usable)")
    extracted: bool | None = d(
        description="reference mode: false when the segment could not be cut"
    )


class FactRecord(Part):
    """One atomic fact of a cited sentence, its entailment verdicts and its scores."""

    text: str = d("", "the fact as the decomposer wrote it")
    precision: Score | None = d(description="the fact's citation precision")
    recall: Score | None = d(description="the fact's citation recall (its citations support it)")
    unscored: str | None = d(description="why the fact has no score")
    precise: list[bool | None] = many(list, "per citation: whether it was needed for the fact")
    joint: Verdict | None = d(description="entailment by all the sentence's usable citations")
    alone: dict[IndexKey, Verdict | None] = many(
        dict, "entailment by each citation alone, by its index in the sentence (0-based)"
    )
    without: dict[IndexKey, Verdict | None] = many(
        dict, "entailment without each citation, by its index in the sentence (0-based)"
    )


class SentenceRecord(Part):
    """One sentence of the response as the judges read it, with its verdicts and facts."""

    text: str = d("", "the sentence as written, citations included")
    judged_text: str = d("", "what the judges read of it")
    citations: list[CitationRecord] = many(list, "its citations, in order")
    unparsed_citations: list[str] = many(
        list,
        "default mode: text in brackets that looks like a citation (a modality "
        "word) and was not read as one, e.g. `(visual, around the end)`",
    )
    verifiable: Verdict | None = d(description="whether the sentence says something observable")
    unscored: str | None = d(description="why the sentence has no score")
    decontext: Verdict | None = d(description="its decontextualization (default mode)")
    decomposition: Verdict | None = d(description="its split into atomic facts")
    facts: list[FactRecord] = many(list, "its atomic facts, in order")


class Trace(Part):
    """Every verdict the scores were computed from (what `murgat rescore` reads)."""

    text: str = d("", "the response's text under judgement")
    text_decontext: Verdict | None = d(description="reference mode: the whole-text rewrite")
    text_note: str | None = d(description="what happened to the whole-text rewrite")
    text_given: bool | None = d(
        description="the input's own decontextualized_text was split instead of the response"
    )
    sentences: list[SentenceRecord] = many(list, "the sentences, in order")


class AnswerCheck(Part):
    """The response's answer against the gold answer."""

    predicted: str | None = d(description="the answer read from the response (null: none)")
    gold: str | None = d(description="the gold answer")


class ScoreRecord(Versioned):
    """A line of scores.jsonl: one response `murgat score` judged.

    Status "ok" where it was scored, "error" (with the reason) where it could not be."""

    index: Count | None = d(description="the response's position in the input (0-based)")
    id: str | int | None = d(description="the response's id (murgat writes text)")
    status: Status = d("ok", "ok: scored; error: it could not be (`error` says why)")
    error: str | None = d(description="why the response could not be scored")
    source: str | None = d(description='where the response was in the input: "line 3", "item 2"')
    video: str | None = d(description="the response's video, under the media root")
    model: str | None = d(description="the model that wrote the response")
    benchmark: str | None = d(description="the benchmark the question comes from")
    categories: dict[str, Label] = many(
        dict, "the question's categories, as the input gives them (`--group-by`)"
    )
    question_type: QuestionType | None = d(description="multiple-choice or open")
    mode: Mode | None = d(description="the scoring rule: default, or the reference's")
    coverage: Score | None = d(description="cited verifiable sentences / verifiable sentences")
    precision: Score | None = d(description="mean citation precision over the cited facts")
    recall: Score | None = d(description="mean citation recall over the cited facts")
    f1: Score | None = d(description="F1 of precision and recall")
    murgat_s: Score | None = d(description="MURGAT-S = coverage x F1")
    note: str | None = d(description="why a score is undefined")
    scored_fraction: Score | None = d(
        description="the share of the verdicts the scores needed that were given (1: all)"
    )
    counts: dict[str, Count] = many(
        dict, "sentences, verifiable, cited, facts, scored and unscored, per response"
    )
    answer: AnswerCheck | None = d(description="the answer read and the gold answer")
    correct: bool | None = d(
        description="the answer is right (null: not graded); an unanswered question is wrong"
    )
    trace: Trace | None = d(description="every sentence, citation, verdict and fact")
    reference_response_score: Any = d(
        description="a reference entry rescored: the score the reference gave it"
    )


class GenerationRecord(Versioned):
    """A line of a cell's responses.jsonl (`murgat generate`).

    One answer (status "error": it could not be made). The dataset row it answers is kept beside it, the row's own fields as they are."""

    model_config = ConfigDict(extra="allow")

    id: str | int | None = d(description="the question's id (murgat writes text)")
    model: str | None = d(description="the cell that wrote it: model/strategy")
    strategy: str | None = d(description="how it was asked: base, cite, posthoc, program, ...")
    sample: Count | None = d(description="which of the samples per question (0-based)")
    status: Status = d("ok", "ok: answered; error: no answer could be made (`error` says why)")
    error: str | None = d(description="why no answer could be made")
    source: str | None = d(description="where the question was in the dataset")
    video: str | None = d(description="the question's video, under the media root")
    question: str | None = d(description="the question")
    options: list[Any] | None = d(description="the options of a multiple-choice question")
    answer: Any = d(description="the gold answer, as a letter for multiple-choice")
    answer_raw: Any = d(description="the gold answer as the dataset gives it")
    question_type: QuestionType | None = d(description="multiple-choice or open")
    categories: dict[str, Any] | None = d(description="the question's categories")
    benchmark: str | None = d(description="the benchmark the question comes from")
    images: list[Any] | None = d(description="images the question carries")
    media: MediaGiven | None = d(
        description="what the responder was given (frames, audio, images) and what reached it"
    )
    posthoc: PosthocEdit | None = d(description="posthoc: the citing edit, and whether kept")
    program: ProgramRecord | None = d(description="program: the plan, its trace and outcome")
    model_generation: str | None = d(description="the response")
    answer_path: str | None = d(
        description="how its answer was read: boxed, answer_line, judge (null: none found)"
    )
    predicted: str | None = d(description="the answer read from the response (null: none)")
    gold: Any = d(description="the dataset's answer, as the dataset gives it")
    correct: bool | None = d(description="the answer is right (null: not graded)")
    unanswered: str | None = d(description="why no answer could be read")


Verdict.model_rebuild()
Panel.model_rebuild()
CascadeStep.model_rebuild()
