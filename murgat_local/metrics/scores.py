"""The run's summary of its scored records: the per-response scores (`grading`) added up, in
total, per group and without the partially scored responses. Pure: no I/O, no model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction

from ..inputs.responses import QUESTION_TYPES
from ..results import ScoreRecord
from .accuracy import QaTally
from .groups import Grouped

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
        self.graded_kinds = Counter(dict.fromkeys(QUESTION_TYPES, 0))
        self.unparsed_citations = 0

    def add(self, r: ScoreRecord) -> None:
        self.responses += 1
        # The answer is graded whether or not its attribution could be scored: a record that
        # erred carries its answer check when the answer was read without the judges
        # (`pipeline.records.generated_answer`), so QA accuracy counts it as generate did.
        if r.correct is not None:  # the record's answer check: `grading.graded_correct`
            # unanswered when the record says no answer was read
            self.qa.add(r.correct, r.answer is None or r.answer.predicted is not None)
            self.graded_kinds[r.question_type or QUESTION_TYPES[0]] += 1
        if r.status != "ok":
            return
        self.scored += 1
        complete = r.scored_fraction in (None, 1.0)
        self.complete += complete
        for m in METRICS:
            value = getattr(r, m)
            if value is not None:
                self.means[m].add(value)
                if complete:
                    self.complete_means[m].add(value)
        self.undefined += r.murgat_s is None
        sentences = r.trace.sentences if r.trace is not None else ()
        self.unparsed_citations += sum(len(s.unparsed_citations) for s in sentences)

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
        summary["unparsed_citations"] = self.unparsed_citations
        return summary


def summarize(records: Iterable[ScoreRecord], group_by: Iterable[str] = ()) -> dict:
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
