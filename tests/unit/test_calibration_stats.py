"""Calibration of p_yes against human labels: ECE and Brier by hand, AUROC as scipy's and
sklearn's, intervals as scipy's paired percentile bootstrap, degenerate inputs as notes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from murgat_local.metrics import stats as S
from murgat_local.metrics.calibration import calibration, reliability

R = 999

P = [0.1, 0.2, 0.7, 0.9, 0.95, 1.0]
Y = [0, 1, 1, 1, 0, 1]


def test_hand_computed_ece_brier_auroc_and_bins():
    got = calibration(P, Y, n_resamples=0)
    # bins of 1/15: 0.1 -> 1, 0.2 -> 3, 0.7 -> 10, 0.9 -> 13, 0.95 and 1.0 -> 14
    assert got["ece"] == pytest.approx((0.1 + 0.8 + 0.3 + 0.1 + abs(1.95 - 1)) / 6)
    assert got["brier"] == pytest.approx((0.01 + 0.64 + 0.09 + 0.01 + 0.9025 + 0) / 6)
    assert got["auroc"] == pytest.approx(5 / 8)  # YES {.2,.7,.9,1} over NO {.1,.95}
    assert (got["n"], got["n_yes"]) == (6, 4)
    bins = got["bins"]
    assert len(bins) == 15 and [b["count"] for b in bins] == [
        0,
        1,
        0,
        1,
        0,
        0,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        1,
        2,
    ]
    assert (
        bins[14]["mean_confidence"] == pytest.approx(0.975)
        and bins[14]["observed_frequency"] == 0.5
    )
    assert bins[0]["mean_confidence"] is None and bins[0]["observed_frequency"] is None
    assert bins[14]["low"] == pytest.approx(14 / 15) and bins[14]["high"] == 1.0
    assert got["ece_ci"] is None and got["notes"]["ece"] == "intervals disabled (0 resamples)"


def test_auroc_is_mann_whitney_u_and_sklearns_with_ties():
    rng = np.random.default_rng(1)
    y = (rng.random(300) < 0.4).astype(int)
    p = np.round(np.clip(0.3 * y + rng.random(300) * 0.7, 0, 1), 1)  # many ties
    got = calibration(p, y, n_resamples=0)["auroc"]
    u = stats.mannwhitneyu(p[y == 1], p[y == 0]).statistic
    assert got == pytest.approx(u / (y.sum() * (1 - y).sum()), rel=1e-12)
    sklearn = pytest.importorskip("sklearn.metrics")
    assert got == pytest.approx(sklearn.roc_auc_score(y, p), rel=1e-12)


def _ece(p, y):
    total = 0.0
    for k in range(15):
        inside = np.minimum(np.floor(p * 15), 14) == k
        total += abs(p[inside].sum() - y[inside].sum())
    return total / p.size


def _auroc(p, y):
    pos, neg = p[y == 1], p[y == 0]
    return ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
        pos.size * neg.size
    )


@pytest.mark.parametrize("seed", [0, 7])
def test_intervals_are_scipys_paired_percentile_bootstrap(seed):
    rng = np.random.default_rng(3)
    p = np.round(rng.random(60), 2)
    y = (rng.random(60) < p).astype(float)
    got = calibration(p, y, n_resamples=R, seed=seed)
    assert got["notes"] == {}
    for name, statistic in (
        ("ece", _ece),
        ("brier", lambda a, b: np.mean((a - b) ** 2)),
        ("auroc", _auroc),
    ):
        ref = stats.bootstrap(
            (p, y),
            statistic,
            paired=True,
            vectorized=False,
            n_resamples=R,
            method="percentile",
            rng=np.random.default_rng(seed),
        ).confidence_interval
        assert got[f"{name}_ci"] == pytest.approx([ref.low, ref.high], rel=1e-12, abs=1e-15), name
        assert (
            got[f"{name}_ci"][0] <= got[name] <= got[f"{name}_ci"][1] or name == "ece"
        )  # ECE is biased up
    # the Brier score is a mean: its interval is the one `mean_ci` gives the squared errors
    assert got["brier_ci"] == S.mean_ci((p - y) ** 2, n_resamples=R, seed=seed)["ci"]


def test_one_label_only_and_empty_inputs_are_notes_not_errors():
    one = calibration([0.9, 0.8, 0.4], [1, 1, 1], n_resamples=R)
    assert one["auroc"] is None and one["auroc_ci"] is None and "all YES" in one["notes"]["auroc"]
    assert one["ece"] is not None and one["brier_ci"] is not None
    empty = calibration([], [], n_resamples=R)
    assert (
        empty["n"] == 0
        and empty["ece"] is None
        and empty["brier"] is None
        and empty["auroc"] is None
    )
    assert (
        set(empty["notes"]) == {"ece", "brier", "auroc"}
        and sum(b["count"] for b in empty["bins"]) == 0
    )
    single = calibration([0.3], [0], n_resamples=R)
    assert single["brier"] == pytest.approx(0.09) and single["brier_ci"] is None
    json.dumps([one, empty, single], allow_nan=False)


def test_resamples_with_one_label_are_left_out_of_the_auroc_interval():
    got = calibration([0.9, 0.2, 0.3, 0.4, 0.1, 0.6], [1, 0, 0, 0, 0, 0], n_resamples=R)
    assert got["auroc"] == 1.0 and got["auroc_ci"] is not None
    note = got["notes"]["auroc"]
    left = int(note.split(" of ")[0])
    assert 0 < left < R and note.endswith(
        "the interval is over the others"
    )  # P(no YES drawn) = (5/6)^6


def test_unknown_pairs_are_left_out_and_bad_inputs_refused():
    got = calibration([0.9, None, 0.2, 0.6], [1, 0, None, 0], n_resamples=0)
    assert got["n"] == 2 and got["brier"] == pytest.approx((0.01 + 0.36) / 2)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration([1.2], [1])
    with pytest.raises(ValueError, match="YES/NO"):
        calibration([0.5], [2])
    with pytest.raises(ValueError, match="length"):
        reliability([0.5, 0.1], [1])
