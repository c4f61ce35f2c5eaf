"""A run's summary of its records: a score run's, as `pipeline.runner.Runner` writes them, what the
runner is handed (`summary=RunSummary`) to add each record to, in memory that does not grow
with the records. Pure: the records come in one at a time, and the final ones again, for the
bootstrap intervals, from an iterable the runner reads; no I/O here.

The summary sits above the pipeline (issue 27): the runner runs the protocol and writes the
records; what they add up to is the metrics layer's, so the pipeline imports no metric. So is
how a `murgat generate` run grades its rows (`GenerationGrades`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..results import GenerationRecord, ScoreRecord
from .accuracy import cell_accuracy, taxes_by_model
from .groups import Grouped
from .intervals import IntervalValues, add_intervals
from .scores import Summary
from .stats import RESAMPLES


class RunSummary:
    """`scores.Summary` of every record, per model (when the records name more than one) and
    per group (`group_by`), with bootstrap intervals over the final records (`resamples`, 0:
    none, and then the records are not read again)."""

    def __init__(self, group_by: Sequence[str] = (), resamples: int = RESAMPLES):
        self.totals = Summary()
        self.by_model: dict[str, Summary] = {}  # responses that name their model
        self.by_group = Grouped(group_by, Summary)
        self.resamples = resamples

    @property
    def responses(self) -> int:
        return self.totals.responses

    @property
    def models(self) -> list[str]:
        """The models the records name (the responders, for the self-grading warning)."""
        return list(self.by_model)

    def add(self, record: ScoreRecord) -> None:
        self.totals.add(record)
        if record.model:
            self.by_model.setdefault(record.model, Summary()).add(record)
        self.by_group.add(record)

    def result(self, records: Callable[[], Iterable[ScoreRecord]]) -> dict:
        """The summary's means and counts, and their intervals; `records()` gives the final
        records once more (asked only when intervals are computed)."""
        summary = self.totals.result()
        if len(self.by_model) > 1:
            summary["by_model"] = {n: self.by_model[n].result() for n in sorted(self.by_model)}
        if self.by_group.fields:
            summary["by_group"] = self.by_group.result()
        values = IntervalValues.of(records() if self.resamples else (), self.by_group.fields)
        add_intervals(summary, values, n_resamples=self.resamples)
        return summary


class GenerationGrades:
    """How `murgat generate` grades its rows (`pipeline.generation_summary.Grades`): each
    cell's `accuracy.cell_accuracy`, the reasoning tax per model (`accuracy.taxes_by_model`)."""

    def cell(self, rows: Sequence[GenerationRecord]) -> dict:
        return cell_accuracy(rows)

    def taxes(self, accuracies: Iterable[tuple[str, str, float | None]]) -> dict[str, float | None]:
        return taxes_by_model(accuracies)


__all__ = ["GenerationGrades", "RunSummary"]
