"""The per-response math the pipeline applies as it scores and grades: pure functions, no I/O,
no model. The run's summary adds these up above the pipeline (`metrics.scores.Summary`,
`metrics.accuracy`).

Attribution (MURGAT), per fact with citations C (some possibly unusable):
  default (ALCE-style strict necessity)
    recall    = 1 if the usable citations together entail the fact, else 0
    precise c = the citations jointly entail the fact, and c is usable, and either c alone
                entails it or the others without c no longer do; precision = share of precise c
  reference (`--compat reference`, meetdavidwan/murgat `run_metric.py`)
    precision = share of citations that entail the fact alone (unusable ones count as no)
    recall    = precision when there is one citation, else the joint verdict
    a citation whose segment could not be extracted drops the fact from the pools.
Per response: coverage = cited verifiable sentences / verifiable sentences, precision and
recall = means over the response's scored facts, F1 their harmonic mean, MURGAT-S = coverage x F1.

QA: `graded_correct`, one question's outcome (a record's `correct`): not graded without a gold
answer, wrong when no answer could be read (`metrics.accuracy` adds the outcomes up).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import mean


def f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class FactScore:
    precision: float | None  # None: the fact is not scored (see `reason`)
    recall: float | None
    precise: tuple[bool | None, ...] = ()  # per citation, in order
    reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.precision is not None and self.recall is not None


def score_fact_default(
    usable: Sequence[bool],
    joint: bool | None,
    alone: Mapping[int, bool | None],
    without: Mapping[int, bool | None],
) -> FactScore:
    """Strict-necessity precision and joint recall for one fact.

    Args:
        usable: per citation, whether its segment could be checked (unusable = unsupported).
        joint: verdict on all usable citations together (None: unparsed; ignored when none usable).
        alone: verdict on citation i alone, for usable i (needed when there are 2+ citations).
        without: verdict on the usable citations other than i, for each usable i that is needed.
    """
    n = len(usable)
    if n == 0:
        return FactScore(None, None, (), "no citations")
    if not any(usable):
        return FactScore(0.0, 0.0, tuple(False for _ in usable))
    if joint is None:
        return FactScore(None, None, tuple(None for _ in usable), "joint verdict unparsed")
    if not joint:
        return FactScore(0.0, 0.0, tuple(False for _ in usable))
    precise: list[bool | None] = []
    usable_idx = [i for i, u in enumerate(usable) if u]
    for i, u in enumerate(usable):
        if not u:
            precise.append(False)
        elif n == 1:
            precise.append(True)
        elif len(usable_idx) == 1:
            precise.append(True)  # the only usable citation carries the joint entailment
        else:
            a = alone.get(i)
            if a is None:
                precise.append(None)
            elif a:
                precise.append(True)
            else:
                w = without.get(i)
                precise.append(None if w is None else not w)
    if any(p is None for p in precise):
        return FactScore(None, None, tuple(precise), "a citation verdict is unparsed")
    return FactScore(sum(map(bool, precise)) / n, 1.0, tuple(precise))


def score_fact_reference(
    usable: Sequence[bool],
    extracted: Sequence[bool],
    alone: Mapping[int, bool | None],
    joint: bool | None,
) -> FactScore:
    """The reference's per-fact precision and recall.

    Args:
        usable: per citation, False when its timestamp did not parse (counted as NO).
        extracted: per citation, False when its segment could not be cut: the fact is dropped.
        alone: verdict on citation i alone, for usable and extracted i.
        joint: verdict on all extracted citations together (used with 2+ citations).
    """
    n = len(usable)
    if n == 0:
        return FactScore(None, None, (), "no citations")
    if not all(e for u, e in zip(usable, extracted) if u):
        return FactScore(None, None, (), "segment extraction failed (the reference drops the fact)")
    judged = [alone.get(i) if u else False for i, u in enumerate(usable)]
    if any(j is None for j in judged):
        return FactScore(None, None, tuple(judged), "a citation verdict is unparsed")
    precision = sum(map(bool, judged)) / n
    if n == 1:
        recall = precision
    elif not any(usable):
        recall = 0.0
    elif joint is None:
        return FactScore(None, None, tuple(judged), "joint verdict unparsed")
    else:
        recall = 1.0 if joint else 0.0
    return FactScore(precision, recall, tuple(judged))


@dataclass(frozen=True)
class SentenceScore:
    verifiable: bool | None  # None: the verifiability verdict did not parse
    cited: bool
    facts: tuple[FactScore, ...] = ()
    unscored: str | None = (
        None  # why this sentence's facts are unknown (e.g. decomposition unparsed)
    )

    @property
    def why_unscored(self) -> str | None:
        """Why this sentence is not fully scored (None when it is)."""
        if self.verifiable is None:
            return "verifiability verdict missing"
        if not (self.verifiable and self.cited):
            return None
        if self.unscored:
            return self.unscored
        missing = [f for f in self.facts if not f.scored]
        if missing:
            return f"{len(missing)} of {len(self.facts)} facts unscored"
        return None


@dataclass(frozen=True)
class ResponseScore:
    coverage: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    murgat_s: float | None
    counts: dict = field(default_factory=dict)
    note: str | None = None
    scored_fraction: float | None = None  # share of sentences scored on complete data

    def as_dict(self) -> dict:
        return {
            "coverage": self.coverage,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "murgat_s": self.murgat_s,
            "scored_fraction": self.scored_fraction,
            "counts": dict(self.counts),
            "note": self.note,
        }


def score_response(sentences: Sequence[SentenceScore], *, reference: bool = False) -> ResponseScore:
    """Coverage, precision, recall, F1 and MURGAT-S for one response.

    Sentences with missing verdicts (verifiability unknown, decomposition unparsed, a fact
    without all its verdicts) are *unscored*: left out of the numbers they would change, counted,
    and reflected in `scored_fraction` (fully scored sentences / sentences), so a table can
    flag or exclude responses scored on partial data. With no verifiable sentence, or cited
    sentences none of whose facts could be scored, the default mode leaves the undefined values
    None with a note; the reference scores such a response 0.
    """
    verifiable = [s for s in sentences if s.verifiable]
    cited = [s for s in verifiable if s.cited]
    facts = [f for s in cited for f in s.facts]
    # (precision, recall) of each scored fact
    scored = [
        (f.precision, f.recall) for f in facts if f.precision is not None and f.recall is not None
    ]
    unscored = [s for s in sentences if s.why_unscored]
    counts = {
        "sentences": len(sentences),
        "verifiable": len(verifiable),
        "unjudged_sentences": sum(1 for s in sentences if s.verifiable is None),
        "unscored_sentences": len(unscored),
        "cited_verifiable": len(cited),
        "facts": len(facts),
        "scored_facts": len(scored),
        "unscored_facts": len(facts) - len(scored),
    }
    fraction = (len(sentences) - len(unscored)) / len(sentences) if sentences else None
    if not verifiable:
        if reference:
            return ResponseScore(0.0, 0.0, 0.0, 0.0, 0.0, counts, scored_fraction=fraction)
        note = (
            "no verifiable sentence"
            if not counts["unjudged_sentences"]
            else "no sentence known to be verifiable (some verifiability verdicts are missing)"
        )
        return ResponseScore(None, None, None, None, None, counts, note, fraction)
    coverage = len(cited) / len(verifiable)
    if cited and not scored and (facts or any(s.unscored for s in cited)) and not reference:
        # Cited facts exist but no verdict could be had for any: the attribution is unknown,
        # not zero.
        return ResponseScore(
            coverage, None, None, None, None, counts, "no cited fact could be scored", fraction
        )
    precision = mean(p for p, _ in scored) if scored else 0.0
    recall = mean(r for _, r in scored) if scored else 0.0
    score_f1 = f1(precision, recall)
    return ResponseScore(
        coverage, precision, recall, score_f1, coverage * score_f1, counts, scored_fraction=fraction
    )


def graded_correct(gold: bool, answered: bool, right: bool | None) -> bool | None:
    """One question's outcome.

    Args:
        gold: whether the question has a gold answer.
        answered: whether an answer was read from the response.
        right: whether that answer matches the gold one (read only when both exist).

    Returns None when the question is not graded (no gold answer), False when it is unanswered.
    """
    if not gold:
        return None
    return bool(right) if answered else False
