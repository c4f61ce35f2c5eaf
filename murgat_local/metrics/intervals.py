"""Bootstrap intervals for the means of a summary. Pure: no I/O.

The running `Summary` keeps no per-response value (a run's memory is flat); the intervals are
computed once the records are final, from one pass over them: `IntervalValues` gathers the same
values the means average (records with status ok, values not None; `correct` as 0/1 for the
accuracy) into compact float arrays, overall, per model, per group (`groups.py`) and over
complete responses, and `add_intervals` writes `<metric>_ci` next to each mean of the summary.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping

import numpy as np

from ..results import ScoreRecord
from .groups import Grouped
from .scores import METRICS
from .stats import CONFIDENCE, RESAMPLES, SEED, mean_ci, method

ACCURACY = "qa_accuracy"


class _Group:
    """The values one summary section averages: per metric, all and complete-only."""

    __slots__ = ("values", "complete", "incomplete")

    def __init__(self):
        self.values = {m: array("d") for m in (*METRICS, ACCURACY)}
        self.complete = {m: array("d") for m in METRICS}
        self.incomplete = 0  # scored responses on partial data

    def add(self, r: ScoreRecord) -> None:
        if r.correct is not None:  # graded whether or not it was scored (`scores.Summary`)
            self.values[ACCURACY].append(float(r.correct))
        if r.status != "ok":
            return
        complete = r.scored_fraction in (None, 1.0)
        self.incomplete += not complete
        for m in METRICS:
            value = getattr(r, m)
            if value is not None:
                self.values[m].append(float(value))
                if complete:
                    self.complete[m].append(float(value))


class IntervalValues:
    """Everything the intervals of a summary need, gathered record by record (`group_by`: the
    fields of the summary's `by_group`)."""

    def __init__(self, group_by: Iterable[str] = ()):
        self.overall = _Group()
        self.by_model: dict[str, _Group] = {}
        self.by_group = Grouped(group_by, _Group)

    def add(self, r: ScoreRecord) -> None:
        self.overall.add(r)
        if r.model:
            self.by_model.setdefault(r.model, _Group()).add(r)
        self.by_group.add(r)

    @classmethod
    def of(cls, records: Iterable[ScoreRecord], group_by: Iterable[str] = ()) -> IntervalValues:
        values = cls(group_by)
        for r in records:
            values.add(r)
        return values


def _section(
    section: dict,
    values: Mapping[str, array],
    metrics: Iterable[str],
    reuse: dict | None,
    **options,
) -> dict:
    """Add `<metric>_ci` (and `ci_notes`) to one section; returns the results by metric."""
    results = {}
    for m in metrics:
        if m not in section:
            continue
        res = (
            reuse[m]
            if reuse and m in reuse
            else mean_ci(np.frombuffer(values[m], np.float64), **options)
        )
        results[m] = res
        section[f"{m}_ci"] = res["ci"]
    section["ci_notes"] = {m: r["note"] for m, r in results.items() if r["note"]}
    return results


def _group(section: dict, group: _Group, **options) -> None:
    results = _section(section, group.values, (*METRICS, ACCURACY), None, **options)
    if isinstance(section.get("complete_only"), dict):
        # No partial response: the complete-only values are the same, and so are their intervals.
        reuse = results if not group.incomplete else None
        _section(section["complete_only"], group.complete, METRICS, reuse, **options)


def add_intervals(
    summary: dict,
    values: IntervalValues,
    *,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """Add `<metric>_ci: [low, high]` (None with a `ci_notes` entry when undefined) next to every
    mean of `summary` (overall, `complete_only`, each `by_model` and `by_group` entry and its
    `complete_only`), and a `ci` block saying how. `n_resamples` 0 adds only the `ci` block (disabled)."""
    if n_resamples <= 0:
        summary["ci"] = {
            **method(0, confidence_level, seed),
            "note": "intervals disabled (0 resamples)",
        }
        return summary
    options = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed}
    _group(summary, values.overall, **options)
    for name, section in (summary.get("by_model") or {}).items():
        if name in values.by_model:
            _group(section, values.by_model[name], **options)
    for field, sections in (summary.get("by_group") or {}).items():
        gathered = values.by_group.groups.get(field, {})
        for name, section in sections.items():
            if name in gathered:
                _group(section, gathered[name], **options)
    summary["ci"] = method(n_resamples, confidence_level, seed)
    return summary
