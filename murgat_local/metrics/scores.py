"""MURGAT scoring math. Pure functions: no I/O, no model.

Per fact with citations C (some possibly unusable):
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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import mean

from ..inputs.responses import QUESTION_TYPES
from .accuracy import QaTally
from .groups import Grouped


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


METRICS = ("coverage", "precision", "recall", "f1", "murgat_s")


class _Mean:
    """`statistics.mean` of the values added, kept as an exact sum: the same float (the exact
    mean, rounded once), in constant memory. Ints alone give an int when the mean is whole,
    as `statistics.mean` does."""

    __slots__ = ("total", "n", "ints")
    _SCALE = 1074  # every finite float times 2**1074 is an integer

    def __init__(self):
        self.total = 0  # the sum, in units of 2**-1074
        self.n = 0
        self.ints = True

    def add(self, value: float) -> None:
        num, den = value.as_integer_ratio()  # den is a power of two for a float, 1 for an int
        self.total += num << (self._SCALE - den.bit_length() + 1)
        self.n += 1
        self.ints = self.ints and isinstance(value, int)

    def value(self) -> float | None:
        if not self.n:
            return None
        exact = Fraction(self.total, self.n << self._SCALE)
        return int(exact) if self.ints and exact.denominator == 1 else float(exact)


class Summary:
    """`summarize`, one record at a time: the same summary, in memory that does not grow with
    the records (a run of any length keeps only these counts and exact sums)."""

    def __init__(self):
        self.responses = 0
        self.scored = 0
        self.undefined = 0
        self.complete = 0
        self.means = {m: _Mean() for m in METRICS}
        self.complete_means = {m: _Mean() for m in METRICS}
        self.qa = QaTally()
        self.graded_kinds = dict.fromkeys(QUESTION_TYPES, 0)

    def add(self, r: Mapping) -> None:
        self.responses += 1
        if r.get("status") != "ok":
            return
        self.scored += 1
        complete = r.get("scored_fraction") in (None, 1.0)
        self.complete += complete
        for m in METRICS:
            if r.get(m) is not None:
                self.means[m].add(r[m])
                if complete:
                    self.complete_means[m].add(r[m])
        self.undefined += r.get("murgat_s") is None
        if r.get("correct") is not None:  # the record's answer check: `accuracy.graded_correct`
            said = r.get("answer")  # unanswered when the record says no answer was read
            self.qa.add(
                r["correct"], not isinstance(said, Mapping) or said.get("predicted") is not None
            )
            kind = r.get("question_type") or QUESTION_TYPES[0]
            kind = (
                kind if isinstance(kind, str) else str(kind)
            )  # a hand-edited record stays countable
            self.graded_kinds[kind] = self.graded_kinds.get(kind, 0) + 1

    def result(self) -> dict:
        summary: dict = {
            "responses": self.responses,
            "scored": self.scored,
            "errors": self.responses - self.scored,
        }
        summary.update({m: self.means[m].value() for m in METRICS})
        summary["undefined"] = self.undefined
        summary["partial"] = self.scored - self.complete
        summary["complete_only"] = {
            "responses": self.complete,
            **{m: self.complete_means[m].value() for m in METRICS},
        }
        qa = self.qa.result()
        summary["qa_accuracy"] = qa["accuracy"]
        summary["unanswered"], summary["unanswered_rate"] = qa["unanswered"], qa["unanswered_rate"]
        summary["qa_graded"] = dict(self.graded_kinds)
        return summary


def summarize(records: Iterable[Mapping], group_by: Iterable[str] = ()) -> dict:
    """Means of the per-response values (how the paper's tables are built), with counts.

    `records` are scored records (`status`, the metric fields, `scored_fraction`, `correct`
    when gradable). `partial` counts responses scored on partial data (scored_fraction < 1);
    `complete_only` repeats the means without them. `qa_graded` counts the graded answers per
    `question_type` (a record without one is multiple-choice). With `group_by`, `by_group[FIELD]
    [VALUE]` holds the same summary over each group's records (see `groups.group_values`).
    """
    summary = Summary()
    groups = Grouped(group_by, Summary)
    for r in records:
        summary.add(r)
        groups.add(r)
    result = summary.result()
    if groups.fields:
        result["by_group"] = groups.result()
    return result
