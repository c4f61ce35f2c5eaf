"""Certified agreement: exact binomial bounds as scipy's, the fixed sequence by hand, and the
guarantee at its nominal rate over 1,000 simulated calibration sets."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from murgat_local.metrics.certify import (
    THRESHOLDS,
    clopper_pearson,
    fixed_sequence,
    verdict_counts,
)
from murgat_local.metrics.guarantees import certify_p_yes as certify


def _set(groups):
    """Calibration pairs from (confidence, verdicts, disagreeing) groups: YES verdicts at that
    confidence, the first `disagreeing` labelled NO by people."""
    p, y = [], []
    for conf, count, wrong in groups:
        p += [conf] * count
        y += [0] * wrong + [1] * (count - wrong)
    return p, y


@pytest.mark.parametrize("k,n", [(0, 1), (0, 30), (3, 20), (7, 7), (12, 250)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_clopper_pearson_is_scipys_exact_interval(k, n, level):
    for alternative in ("two-sided", "less", "greater"):
        ref = stats.binomtest(k, n, alternative=alternative).proportion_ci(level, method="exact")
        got = clopper_pearson(k, n, confidence_level=level, alternative=alternative)
        assert got == pytest.approx((ref.low, ref.high), rel=1e-9, abs=1e-12), alternative


def test_the_binomial_test_rejects_exactly_when_the_upper_bound_is_below_the_risk():
    for n in (22, 40, 100, 400):
        for k in range(n // 5):
            reject = stats.binom.cdf(k, n, 0.1) <= 0.1
            assert reject == (
                clopper_pearson(k, n, confidence_level=0.9, alternative="less")[1] <= 0.1
            )


def test_fixed_sequence_certifies_the_lowest_threshold_before_the_first_failure():
    # confidence 0.95: 30 all agree; 0.75: 30 more, 2 disagree; 0.55: 40 more, 17 disagree
    p, y = _set([(0.95, 30, 0), (0.75, 30, 2), (0.55, 40, 17)])
    # min_kept 1: from the first threshold that can reject; the default (50) skips 0.9's 30
    assert [t["result"] for t in certify(p, y, thresholds=(0.9, 0.7, 0.5))["tests"]] == [
        "too few",
        "rejected",
        "failed",
    ]
    got = certify(p, y, thresholds=(0.9, 0.7, 0.5), min_kept=1)
    assert [t["result"] for t in got["tests"]] == ["rejected", "rejected", "failed"]
    assert got["tests"][1] == {
        "threshold": 0.7,
        "kept": 60,
        "disagree": 2,
        "p_value": pytest.approx(stats.binom.cdf(2, 60, 0.1)),
        "result": "rejected",
    }
    assert got["tests"][0]["p_value"] == pytest.approx(0.9**30)
    assert (
        got["threshold"] == 0.7 and got["coverage"] == 0.6 and got["kept"] == 60 and got["n"] == 100
    )
    assert got["agreement"] == pytest.approx(58 / 60)
    assert got["risk_upper"] == pytest.approx(
        stats.binomtest(2, 60, alternative="less").proportion_ci(0.9, method="exact").high, rel=1e-9
    )
    assert got["risk_upper"] <= 0.1 and (got["target"], got["alpha"], got["note"]) == (
        0.9,
        0.1,
        None,
    )
    json.dumps(got, allow_nan=False)


def test_a_failure_stops_the_sequence_even_when_a_lower_threshold_would_pass():
    p, y = _set(
        [(0.95, 25, 2), (0.75, 75, 0)]
    )  # 0.9: 2 of 25 wrong fails; 0.7: 2 of 100 would pass
    got = certify(p, y, thresholds=(0.9, 0.7), min_kept=1)
    assert [t["result"] for t in got["tests"]] == ["failed", "not reached"]
    assert stats.binom.cdf(2, 100, 0.1) <= 0.1  # the one not reached
    assert got["threshold"] is None and got["coverage"] == 0.0 and "failed" in got["note"]


def test_thresholds_keeping_too_few_to_test_are_passed_over():
    # 21 verdicts can never reject at 0.9 / 0.1 (0.9^21 > 0.1); 22 can
    p, y = _set([(0.99, 21, 0), (0.8, 40, 2)])
    got = certify(p, y, thresholds=(0.95, 0.7))
    assert [t["result"] for t in got["tests"]] == ["too few", "rejected"] and got["tests"][0][
        "p_value"
    ] is None
    assert got["threshold"] == 0.7 and got["coverage"] == 1.0
    none = certify(*_set([(0.99, 21, 0)]), thresholds=(0.95, 0.7))
    assert none["threshold"] is None and "enough verdicts" in none["note"]


def test_no_verdict_agreement_with_no_verdicts_and_no_labels():
    empty = certify([], [])
    assert (
        empty["threshold"] is None
        and empty["n"] == 0
        and empty["coverage"] == 0.0
        and empty["note"]
    )
    # NO verdicts count by their own confidence: p_yes 0.02 is a NO at confidence 0.98
    got = certify([0.02] * 40 + [None], [0] * 40 + [1], thresholds=(0.97, 0.5), min_kept=1)
    assert got["n"] == 40 and got["threshold"] == 0.5 and got["tests"][0]["kept"] == 40
    with pytest.raises(ValueError):
        certify([0.5], [1], target=1.0)


def test_the_vectorised_sequence_is_certify_row_by_row():
    rng = np.random.default_rng(5)
    p = rng.random((20, 300))
    y = (rng.random((20, 300)) < np.where(p > 0.5, 0.5 + 0.9 * (p - 0.5), 0.4 * p)).astype(int)
    kept, wrong = verdict_counts(p, y, THRESHOLDS)
    best, _ = fixed_sequence(kept, wrong, THRESHOLDS)
    for row in range(20):
        got = certify(p[row], y[row])["threshold"]
        assert got == (None if best[row] < 0 else THRESHOLDS[best[row]])


def test_the_guarantee_holds_at_its_nominal_rate_over_1000_calibration_sets():
    # A judge overconfident by a known amount: confidence c ~ U(0.5, 1), P(disagree | c) = 1.3 (1 - c),
    # so the risk among verdicts kept at t is 0.65 (1 - t): at most 0.1 only from t = 0.846.
    rng = np.random.default_rng(2025)
    draws, n, target, alpha = 1000, 1000, 0.9, 0.1
    conf = rng.uniform(0.5, 1.0, (draws, n))
    wrong = rng.random((draws, n)) < 1.3 * (1 - conf)
    p_yes = np.where(rng.random((draws, n)) < 0.5, conf, 1 - conf)
    human = np.where(wrong, p_yes < 0.5, p_yes >= 0.5).astype(int)
    t = np.array(THRESHOLDS)
    kept, disagree = verdict_counts(p_yes, human, t)
    best, _ = fixed_sequence(kept, disagree, t, target=target, alpha=alpha)
    certified = best >= 0
    risk = 0.65 * (1 - t[np.maximum(best, 0)])
    violated = certified & (risk > 1 - target)
    sigma = np.sqrt(alpha * (1 - alpha) / draws)
    assert violated.mean() <= alpha + 3 * sigma
    assert certified.mean() > 0.7  # not vacuous: most sets certify a threshold
    assert np.median(t[best[certified]]) < 0.95  # and keeps a good share of verdicts
    # the same sets, with the lowest threshold whose observed agreement is >= 90% (no test), break it
    with np.errstate(invalid="ignore", divide="ignore"):
        naive_ok = (kept > 0) & (disagree / np.maximum(kept, 1) <= 1 - target)
    naive = t[np.where(naive_ok, np.arange(t.size), t.size - 1).min(axis=1)]
    assert (0.65 * (1 - naive) > 1 - target).mean() > alpha + 3 * sigma
