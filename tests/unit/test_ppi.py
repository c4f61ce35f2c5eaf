"""Means corrected by people (PPI++): by hand on a small example, and on 1,000 simulated runs of
a judge with a known bias and noise: nominal coverage, never wider than the human-only interval."""

from __future__ import annotations

import json
import statistics as st

import numpy as np
import pytest

from murgat_local.metrics.ppi import corrected_mean, ppi_rows

Y = [1.0, 0.0, 1.0, 1.0]
F_L = [0.9, 0.2, 0.6, 0.8]
F_U = [0.9, 0.0, 1.0, 0.1, 0.95, 0.05]
Z = st.NormalDist().inv_cdf(0.975)


def test_hand_computed_ppi_plus_plus():
    n, m = len(Y), len(F_U)
    var_f = st.variance(F_L + F_U)
    lam = min(1.0, max(0.0, st.covariance(Y, F_L) / ((1 + n / m) * var_f)))
    theta = st.mean(Y) + lam * (st.mean(F_U) - st.mean(F_L))
    se = (st.variance([y - lam * f for y, f in zip(Y, F_L)]) / n + lam**2 * var_f / m) ** 0.5
    got = corrected_mean(F_L + F_U, Y + [None] * m)
    assert 0 < lam < 1 and got["ppi"]["lambda"] == pytest.approx(lam)
    assert got["ppi"]["mean"] == pytest.approx(theta)
    assert got["ppi"]["ci"] == pytest.approx([theta - Z * se, theta + Z * se])
    assert (got["ppi"]["n"], got["ppi"]["n_unlabelled"], got["left_out"]) == (4, 6, 0)
    human_half = Z * st.stdev(Y) / 2
    assert got["human_only"] == {
        "n": 4,
        "mean": 0.75,
        "ci": pytest.approx([0.75 - human_half, 0.75 + human_half]),
        "note": None,
    }
    judge = F_L + F_U
    judge_half = Z * st.stdev(judge) / len(judge) ** 0.5
    assert got["judge_only"]["mean"] == pytest.approx(st.mean(judge))
    assert got["judge_only"]["ci"] == pytest.approx(
        [st.mean(judge) - judge_half, st.mean(judge) + judge_half]
    )
    json.dumps(got, allow_nan=False)


def test_a_judge_that_says_nothing_gives_the_human_mean():
    got = corrected_mean([0.5] * 10, [1, 0, 1, 1] + [None] * 6)  # constant judge: lambda 0
    assert got["ppi"]["lambda"] == 0.0
    assert got["ppi"]["mean"] == got["human_only"]["mean"] and got["ppi"]["ci"] == pytest.approx(
        got["human_only"]["ci"]
    )
    anti = corrected_mean(
        [0.1, 0.9, 0.2, 0.0, 0.5, 0.5], [1, 0, 1, 1, None, None]
    )  # negative covariance: clipped
    assert anti["ppi"]["lambda"] == 0.0 and anti["ppi"]["mean"] == 0.75


def test_degenerate_inputs_are_notes():
    none = corrected_mean([0.2, 0.4, 0.6], [None, None, None])
    assert (
        none["ppi"]["mean"] is None
        and none["human_only"]["mean"] is None
        and none["ppi"]["note"] == "no values"
    )
    assert none["judge_only"]["mean"] == pytest.approx(0.4) and none["judge_only"]["ci"] is not None
    every = corrected_mean([0.2, 0.4, 0.6], [0.0, 0.5, 1.0])
    assert (
        every["ppi"]["lambda"] == 0.0
        and every["ppi"]["mean"] == 0.5
        and "every scored" in every["ppi"]["note"]
    )
    one = corrected_mean([0.2, 0.4, 0.6], [1.0, None, None])
    assert (
        one["ppi"]["mean"] == 1.0 and one["ppi"]["ci"] is None and "one value" in one["ppi"]["note"]
    )
    skipped = corrected_mean([None, 0.4, 0.6, 0.8], [1.0, 0.0, 1.0, None])
    assert (
        skipped["left_out"] == 1
        and skipped["human_only"]["n"] == 2
        and skipped["judge_only"]["n"] == 3
    )
    with pytest.raises(ValueError, match="length"):
        corrected_mean([0.1], [])
    json.dumps([none, every, one, skipped], allow_nan=False)


def _simulate(rng, draws, n, m, bias, noise, informative=True):
    y = rng.uniform(0, 1, (draws, n + m))  # true per-response scores: mean 0.5
    f = (
        (y if informative else rng.uniform(0, 1, (draws, n + m)))
        + bias
        + rng.normal(0, noise, (draws, n + m))
    )
    return y[:, :n], f[:, :n], f[:, n:]


@pytest.mark.parametrize("informative", [True, False])
def test_ppi_covers_the_true_mean_at_the_nominal_rate_and_is_never_wider(informative):
    draws, n, m, truth = 1000, 100, 900, 0.5
    y, f_l, f_u = _simulate(
        np.random.default_rng(30 + informative),
        draws,
        n,
        m,
        bias=0.15,
        noise=0.1,
        informative=informative,
    )
    theta, se, lam = ppi_rows(y, f_l, f_u)
    sigma = np.sqrt(0.95 * 0.05 / draws)
    covered = np.abs(theta - truth) <= Z * se
    assert abs(covered.mean() - 0.95) <= 3 * sigma
    human_se = y.std(axis=1, ddof=1) / np.sqrt(n)
    assert abs((np.abs(y.mean(axis=1) - truth) <= Z * human_se).mean() - 0.95) <= 3 * sigma
    ratio = se / human_se
    assert ratio.max() <= 1.02  # never wider but for the noise in lambda
    if informative:
        assert np.median(ratio) < 0.6 and np.median(lam) > 0.6  # a good judge narrows it
        f = np.concatenate([f_l, f_u], axis=1)
        judge_covered = np.abs(f.mean(axis=1) - truth) <= Z * f.std(axis=1, ddof=1) / np.sqrt(n + m)
        assert judge_covered.mean() < 0.05  # the judge alone is biased: its interval misses
    else:
        assert np.median(lam) < 0.1
    # the public function gives the same numbers as the vectorised rows
    one = corrected_mean(np.concatenate([f_l[0], f_u[0]]), list(y[0]) + [None] * m)
    assert one["ppi"]["mean"] == pytest.approx(theta[0]) and one["ppi"]["lambda"] == pytest.approx(
        lam[0]
    )
    assert one["ppi"]["ci"] == pytest.approx([theta[0] - Z * se[0], theta[0] + Z * se[0]])
