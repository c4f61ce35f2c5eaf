"""Two runs over the same responses, compared pair by pair (`murgat compare`). Pure: no I/O.

Responses are matched by `id` among the records each run scored (status ok). Per metric, the
pairs where both runs have a value (MURGAT-S, coverage, F1: not None; accuracy: the record's
answer check `correct`, True/False, not None) give the mean difference B - A, its paired
percentile bootstrap interval and a paired permutation p-value (`stats.paired_difference`).
With `group_by`, the same per group (`groups.group_values`) of each field; a pair's groups are
read from run A's record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..results import ScoreRecord
from .groups import NO_VALUE, group_values
from .stats import CONFIDENCE, PERMUTATION, RESAMPLES, SEED, method, paired_difference

COMPARED = ("murgat_s", "coverage", "f1", "accuracy")
_FIELD = {"murgat_s": "murgat_s", "coverage": "coverage", "f1": "f1", "accuracy": "correct"}


def _value(r: ScoreRecord, metric: str) -> float | None:
    v = getattr(r, _FIELD[metric])
    return None if v is None else float(v)


@dataclass
class RunRecords:
    """What a comparison needs of one run: per scored id its compared values (and its groups of
    each `group_by` field), and the ids that erred. The first record of an id counts (ids are
    unique in a run's records)."""

    group_by: tuple[str, ...] = ()
    records: int = 0
    scored: dict[str, tuple] = field(default_factory=dict)
    groups: dict[str, tuple[tuple[str, ...], ...]] = field(
        default_factory=dict
    )  # per scored id, per field
    errored: set[str] = field(default_factory=set)
    answer_checked: int = 0  # scored records that carry an answer check

    def add(self, r: ScoreRecord) -> None:
        self.records += 1
        if r.id is None:
            return
        rid = str(r.id)
        if rid in self.scored or rid in self.errored:
            return
        if r.status == "ok":
            self.scored[rid] = tuple(_value(r, m) for m in COMPARED)
            self.answer_checked += r.correct is not None
            if self.group_by:
                self.groups[rid] = tuple(group_values(r, f) for f in self.group_by)
        else:
            self.errored.add(rid)

    @classmethod
    def of(cls, records: Iterable[ScoreRecord], group_by: Iterable[str] = ()) -> RunRecords:
        run = cls(tuple(dict.fromkeys(group_by)))
        for r in records:
            run.add(r)
        return run


def _differences(a: RunRecords, b: RunRecords, ids: list[str], options: dict) -> dict:
    """Per compared metric, the paired difference B - A over the pairs of `ids`."""
    metrics = {}
    for k, m in enumerate(COMPARED):
        va = [a.scored[i][k] for i in ids]
        vb = [b.scored[i][k] for i in ids]
        res = paired_difference(vb, va, **options)
        res["mean_a"], res["mean_b"] = res["mean_b"], res["mean_a"]  # computed as B - A
        if m == "accuracy" and res["n"] == 0:
            res["note"] = (
                "no matched response has an answer check (`correct`: a gold answer and an answer "
                "read from the response) in both runs"
            )
        metrics[m] = res
    return metrics


def _by_group(a: RunRecords, b: RunRecords, matched: list[str], options: dict) -> dict:
    """`by_group[FIELD][VALUE]`: the matched pairs of each group (read from A) and their differences."""
    out = {}
    for k, name in enumerate(a.group_by):
        members: dict[str, list[str]] = {}
        for i in matched:
            for v in a.groups[i][k]:
                members.setdefault(v, []).append(i)
        out[name] = {
            v: {"matched": len(ids), "metrics": _differences(a, b, ids, options)}
            for v, ids in sorted(members.items(), key=lambda kv: (kv[0] == NO_VALUE, kv[0]))
        }
    return out


def compare_runs(
    a: RunRecords,
    b: RunRecords,
    *,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """The comparison report: counts of matched and unmatched ids, and per metric the paired
    difference B - A (`n`, `mean_a`, `mean_b`, `difference`, `ci`, `p_value`, `note`); with
    A's `group_by`, `by_group[FIELD][VALUE]` holds each group's `matched` and `metrics`."""
    ids_a, ids_b = set(a.scored) | a.errored, set(b.scored) | b.errored
    matched = [i for i in a.scored if i in b.scored]  # in A's order
    counts = {
        "matched": len(matched),
        "only_a": len(ids_a - ids_b),  # ids A holds and B does not
        "only_b": len(ids_b - ids_a),
        "errored_a": len(a.errored),
        "errored_b": len(b.errored),
        "errored_either": len(
            (ids_a & ids_b) & (a.errored | b.errored)
        ),  # ids both hold, one or both erred
        "scored_by_one_run": len(set(a.scored) ^ set(b.scored)),
    }
    options = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed}
    report: dict = {
        "difference": "B - A",
        "counts": counts,
        "records": {"a": a.records, "b": b.records},
        "metrics": _differences(a, b, matched, options),
        "method": {
            **method(n_resamples, confidence_level, seed),
            "p_value": PERMUTATION,
            "pairs": "responses scored (status ok) by both runs, matched by id; per metric "
            "the pairs where both values are known",
        },
    }
    if a.group_by:
        report["by_group"] = _by_group(a, b, matched, options)
        report["method"]["groups"] = (
            "each pair in the groups of run A's record (`(none)`: no value)"
        )
    return report
