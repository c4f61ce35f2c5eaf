"""The report `murgat compare A B --out FILE` writes: two runs' scores compared pair by pair.

Every key is one `metrics.compare.compare_runs` and the command write, and each is always
written (a value that cannot be had is null, with a `note`); only `by_group` and
`method.groups` depend on `--group-by`. The compared values are fractions (a score, an answer
check as 1 or 0), so their means lie in [0, 1] and a difference B - A, like its interval, in
[-1, 1].
"""

from __future__ import annotations

from typing import Literal

from .fields import Count, Part, Score, Signed, SignedInterval, d
from .versions import Versioned

# A bootstrap interval of a difference B - A: [low, high].
DifferenceInterval = SignedInterval


class PairedDifference(Part):
    """One metric compared over the pairs where both runs have a value (`stats.paired_difference`)."""

    n: Count = d(..., "pairs where both runs have a value")
    mean_a: Score | None = d(..., "run A's mean over those pairs (null: no pair)")
    mean_b: Score | None = d(..., "run B's mean over those pairs (null: no pair)")
    difference: Signed | None = d(..., "the mean difference B - A (null: no pair)")
    ci: DifferenceInterval | None = d(
        ...,
        "paired percentile bootstrap interval of `difference` at `method.confidence_level` "
        "(null: fewer than two pairs, `note` says why)",
    )
    p_value: Score | None = d(
        ...,
        "two-sided paired permutation p-value of `difference` (null: fewer than two pairs, or "
        "undefined; `note` says why)",
    )
    note: str | None = d(..., "why a number is null or the interval flat (null: nothing to say)")


class Metrics(Part):
    """The compared metrics, each as its paired difference B - A."""

    murgat_s: PairedDifference = d(..., "MURGAT-S")
    coverage: PairedDifference = d(..., "coverage: the share of sentences that cite")
    f1: PairedDifference = d(..., "citation F1")
    accuracy: PairedDifference = d(
        ..., "accuracy: the record's answer check `correct` as 1 (right) or 0 (wrong)"
    )

    def each(self) -> list[tuple[str, PairedDifference]]:
        """(metric, its difference) in the order the tables show them."""
        return [(name, getattr(self, name)) for name in type(self).model_fields]


class Counts(Part):
    """How the two runs' responses matched by id."""

    matched: Count = d(..., "ids both runs scored (status ok): the pairs compared")
    only_a: Count = d(..., "ids run A holds and run B does not")
    only_b: Count = d(..., "ids run B holds and run A does not")
    errored_a: Count = d(..., "ids run A could not score")
    errored_b: Count = d(..., "ids run B could not score")
    errored_either: Count = d(..., "ids both runs hold that one or both could not score")
    scored_by_one_run: Count = d(..., "ids one run scored and the other did not")


class PerRun(Part):
    """A number for each run."""

    a: Count = d(..., "run A's")
    b: Count = d(..., "run B's")


class RunFiles(Part):
    """The two runs' records files."""

    a: str = d(..., "run A's scores.jsonl")
    b: str = d(..., "run B's scores.jsonl")


class Method(Part):
    """How the intervals and p-values were computed and which pairs they cover."""

    method: str = d(..., "the bootstrap used")
    confidence_level: Score = d(..., "the intervals' confidence level")
    resamples: Count = d(..., "bootstrap resamples and permutations")
    seed: Count = d(..., "the seed of the resamples and permutations")
    p_value: str = d(..., "the test that gives `p_value`")
    pairs: str = d(..., "which responses are paired")
    groups: str | None = d(description="--group-by: how a pair's groups are read")


class GroupDifference(Part):
    """The pairs of one group and their paired differences."""

    matched: Count = d(..., "the group's pairs (ids both runs scored)")
    metrics: Metrics = d(..., "per metric: its paired difference B - A over the group's pairs")


class Comparison(Versioned):
    """The report of `murgat compare A B --out FILE`: B - A per metric, paired by response.

    Per metric the mean difference, its paired bootstrap interval and a permutation p-value;
    the counts of matched ids, and with --group-by the same per group of run A's records."""

    difference: Literal["B - A"] = d(..., "what each difference is: run B's mean minus run A's")
    runs: RunFiles = d(..., "the records files compared")
    records: PerRun = d(..., "the lines each records file holds that could be read")
    counts: Counts = d(..., "how the runs' responses matched by id")
    metrics: Metrics = d(..., "per metric: its paired difference B - A over the matched pairs")
    method: Method = d(..., "how the intervals and p-values were computed")
    by_group: dict[str, dict[str, GroupDifference]] | None = d(
        description="--group-by: per field and value of run A's records, that group's pairs "
        "and their differences (`(none)`: no value)"
    )
