"""The statistics helpers give scipy's numbers for the same seed and resamples, and never NaN."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from murgat_local.metrics import stats as S
from murgat_local.metrics.intervals import IntervalValues, add_intervals
from murgat_local.metrics.scores import summarize
from murgat_local.results import ScoreRecord

R = 999  # resamples: small, the suite stays fast


def _scipy_ci(data, statistic, n, **kw):
    res = stats.bootstrap(
        data,
        statistic,
        n_resamples=R,
        method="percentile",
        confidence_level=0.95,
        batch=S.batch_size(n, R),
        rng=np.random.default_rng(0),
        **kw,
    )
    return [res.confidence_interval.low, res.confidence_interval.high]


def _no_nan(obj):
    """No NaN or infinity anywhere: the dict is strict JSON."""
    json.dumps(obj, allow_nan=False)


def test_mean_ci_is_scipys_percentile_bootstrap():
    x = np.random.default_rng(3).random(200)
    got = S.mean_ci(x, n_resamples=R)
    assert got["n"] == 200 and got["mean"] == pytest.approx(x.mean()) and got["note"] is None
    assert got["ci"] == _scipy_ci((x,), np.mean, 200, vectorized=True)
    assert got["ci"][0] < got["mean"] < got["ci"][1]


@pytest.mark.parametrize("n", [2, 3, 17, 200, 2000])
@pytest.mark.parametrize("kind", ["float", "binary", "thirds"])
def test_mean_ci_without_scipy_gives_scipys_numbers_to_the_last_digit(n, kind):
    rng = np.random.default_rng(n)
    x = {
        "float": rng.random(n),
        "binary": (rng.random(n) < 0.3).astype(float) + (np.arange(n) == 0),
        "thirds": rng.integers(0, 4, n) / 3 + (np.arange(n) == 0),
    }[kind]
    for seed, level in ((0, 0.95), (5, 0.9)):
        got = S.mean_ci(x, n_resamples=R, seed=seed, confidence_level=level)["ci"]
        ref = stats.bootstrap(
            (x,),
            np.mean,
            n_resamples=R,
            method="percentile",
            confidence_level=level,
            rng=np.random.default_rng(seed),
        ).confidence_interval
        assert got == [float(ref.low), float(ref.high)]


def test_mean_ci_on_a_known_sample():
    # Ten 0/1 values, mean 0.7: the interval is a percentile of resampled means, a multiple of
    # 0.1, around 0.7, and the same on every call.
    x = [1, 1, 1, 0, 1, 1, 0, 1, 0, 1]
    got = S.mean_ci(x, n_resamples=R)
    assert got["mean"] == 0.7 and got == S.mean_ci(x, n_resamples=R)
    low, high = got["ci"]
    assert 0.3 <= low < 0.7 < high <= 1.0
    for v in (low, high):
        assert v * 10 == pytest.approx(round(v * 10))
    # None and NaN are left out, as the summary's means leave out nulls.
    assert S.mean_ci([*x, None, float("nan")], n_resamples=R) == got


def test_the_batch_size_changes_no_number():
    x = np.random.default_rng(4).random(300)
    a = stats.bootstrap(
        (x,), np.mean, n_resamples=R, method="percentile", batch=7, rng=np.random.default_rng(0)
    )
    b = stats.bootstrap(
        (x,), np.mean, n_resamples=R, method="percentile", batch=R, rng=np.random.default_rng(0)
    )
    assert a.confidence_interval == b.confidence_interval


def test_degenerate_intervals_are_defined():
    assert S.mean_ci([]) == {"n": 0, "mean": None, "ci": None, "note": "no values"}
    one = S.mean_ci([0.4])
    assert one["mean"] == 0.4 and one["ci"] is None and "one value" in one["note"]
    same = S.mean_ci([0.1, 0.1, 0.1])
    assert same["mean"] == 0.1 and same["ci"] == [0.1, 0.1] and "equal" in same["note"]
    off = S.mean_ci([0.1, 0.2], n_resamples=0)
    assert off["ci"] is None and "disabled" in off["note"]


def test_paired_difference_is_scipys_paired_bootstrap_and_permutation_test():
    rng = np.random.default_rng(5)
    a = rng.random(40)
    b = a - 0.1 + 0.05 * rng.standard_normal(40)
    got = S.paired_difference(a, b, n_resamples=R)
    assert got["n"] == 40 and got["difference"] == pytest.approx(np.mean(a - b))
    assert got["mean_a"] == pytest.approx(a.mean()) and got["mean_b"] == pytest.approx(b.mean())
    want = _scipy_ci(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), 40, vectorized=True, paired=True
    )
    assert got["ci"] == pytest.approx(want, rel=1e-12)
    perm = stats.permutation_test(
        (a - b,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=R,
        batch=S.batch_size(40, R),
        rng=np.random.default_rng(0),
    )
    assert got["p_value"] == perm.pvalue and got["p_value"] < 0.01


def test_permutation_is_exact_for_few_pairs():
    a, b = [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 5.0]
    got = S.paired_difference(a, b, n_resamples=R)
    # 2^5 sign patterns; |mean| >= 0.8 for 4 of them (+-, with the zero difference either sign).
    assert got["p_value"] == pytest.approx(4 / 32)
    assert got["difference"] == pytest.approx(0.8)


def test_large_samples_use_vectorized_sign_flips_that_agree_with_scipy(monkeypatch):
    rng = np.random.default_rng(6)
    d = 0.02 + rng.standard_normal(400)
    want = stats.permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=4000,
        rng=np.random.default_rng(0),
    ).pvalue
    monkeypatch.setattr(S, "SCIPY_PERMUTATION_LIMIT", 0)
    got = S.permutation_pvalue(d, n_resamples=4000)
    assert 0.05 < want < 0.95 and got == pytest.approx(want, abs=0.04)  # Monte Carlo error
    assert S.permutation_pvalue(np.zeros(400), n_resamples=4000) == 1.0


def test_identical_samples_differ_by_nothing():
    a = [0.2, 0.5, 0.9, None]
    got = S.paired_difference(a, a, n_resamples=R)
    assert (
        got["n"] == 3
        and got["difference"] == 0.0
        and got["ci"] == [0.0, 0.0]
        and got["p_value"] == 1.0
    )
    assert "differences are equal" in got["note"]
    none = S.paired_difference([None], [1.0])
    assert (
        none["n"] == 0 and none["difference"] is None and none["p_value"] is None and none["note"]
    )


@pytest.mark.parametrize(
    "kind,func,vectorized",
    [
        ("pearson", "pearsonr", True),
        ("spearman", "spearmanr", True),
        ("kendall", "kendalltau", False),
    ],
)
def test_correlations_are_scipys(kind, func, vectorized):
    rng = np.random.default_rng(7)
    x = rng.random(30)
    y = x + rng.random(30)
    got = S.correlation(list(x), list(y), kind, n_resamples=R)
    res = getattr(stats, func)(x, y)
    assert got["value"] == pytest.approx(res.statistic) and got["p_value"] == pytest.approx(
        res.pvalue
    )
    want = _scipy_ci(
        (x, y), lambda a, b: getattr(stats, func)(a, b).statistic, 30, paired=True, vectorized=False
    )
    assert got["ci"] == pytest.approx(want, rel=1e-9)
    assert got["n"] == 30 and got["note"] is None
    assert S.correlation(x, y, kind, ci=False)["ci"] is None


@pytest.mark.parametrize("kind", S.KINDS)
def test_undefined_correlations_are_null_with_a_note(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no scipy or numpy warning escapes
        cases = [
            S.correlation([0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4], kind),  # constant x
            S.correlation([0.1, 0.2, 0.3], [1, 1, 1], kind),  # constant y
            S.correlation([0.1, 0.2], [0.3, 0.1], kind),  # n < 3
            S.correlation([0.1, None, 0.3, 0.4], [0.2, 0.5, None, 0.1], kind),  # 2 known pairs
            S.correlation([], [], kind),
        ]
        for c in cases:
            assert c["value"] is None and c["ci"] is None and c["p_value"] is None and c["note"], c
            _no_nan(c)
        assert "constant" in cases[0]["note"] and "at least 3" in cases[2]["note"]
        # Defined, but some resamples are constant: they are left out of the interval, counted.
        x, y = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], list(range(10))
        c = S.correlation(x, y, kind, n_resamples=R)
        assert c["value"] is not None and "resamples have constant scores" in c["note"]
        boot = _boot_distribution(x, y, kind)
        defined = boot[np.isfinite(boot)]
        assert 0 < defined.size < R and f"{R - defined.size} of {R}" in c["note"]
        assert c["ci"] == pytest.approx(list(np.percentile(defined, [2.5, 97.5])), rel=1e-9)
        _no_nan(c)


def _boot_distribution(x, y, kind):
    func = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[
        kind
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on the constant resamples
        res = stats.bootstrap(
            (np.array(x, float), np.array(y, float)),
            lambda a, b: func(a, b).statistic,
            n_resamples=R,
            method="percentile",
            paired=True,
            vectorized=False,
            rng=np.random.default_rng(0),
        )
    return res.bootstrap_distribution


def test_a_summary_gets_an_interval_next_to_every_mean():
    recs = [
        {
            "status": "ok",
            "model": m,
            "murgat_s": s,
            "coverage": 1.0,
            "precision": s,
            "recall": s,
            "f1": s,
            "scored_fraction": f,
            "correct": c,
        }
        for m, s, f, c in [
            ("x", 0.2, 1.0, True),
            ("x", 0.4, 1.0, False),
            ("x", None, None, None),
            ("y", 0.9, 0.5, True),
            ("y", 0.7, 1.0, True),
        ]
    ] + [{"status": "error"}]
    recs = [ScoreRecord.model_validate(r) for r in recs]
    summary = summarize(recs)
    summary["by_model"] = {"x": summarize(recs[:3]), "y": summarize(recs[3:5])}
    add_intervals(summary, IntervalValues.of(recs), n_resamples=R)
    assert summary["ci"]["resamples"] == R and summary["ci"]["confidence_level"] == 0.95
    for section in (summary, summary["complete_only"], *summary["by_model"].values()):
        for m in ("coverage", "precision", "recall", "f1", "murgat_s"):
            ci = section[f"{m}_ci"]
            assert ci is None and m in section["ci_notes"] or ci[0] <= section[m] <= ci[1]
    assert summary["murgat_s_ci"] == S.mean_ci([0.2, 0.4, 0.9, 0.7], n_resamples=R)["ci"]
    assert (
        summary["complete_only"]["murgat_s_ci"] == S.mean_ci([0.2, 0.4, 0.7], n_resamples=R)["ci"]
    )
    assert summary["qa_accuracy_ci"] == S.mean_ci([1, 0, 1, 1], n_resamples=R)["ci"]
    assert summary["coverage_ci"] == [1.0, 1.0] and "equal" in summary["ci_notes"]["coverage"]
    assert summary["by_model"]["y"]["complete_only"]["murgat_s_ci"] is None  # one complete response
    _no_nan(summary)
    off = summarize(recs)
    add_intervals(off, IntervalValues.of(recs), n_resamples=0)
    assert "murgat_s_ci" not in off and off["ci"]["resamples"] == 0


def test_a_mean_over_100000_values_takes_seconds():
    import time

    x = np.random.default_rng(8).random(100_000)
    t0 = time.perf_counter()
    got = S.mean_ci(x, n_resamples=500)
    elapsed = time.perf_counter() - t0
    assert got["ci"][0] < got["mean"] < got["ci"][1] and math.isfinite(elapsed)
    assert elapsed < 30  # ~0.3 s here: 10,000 resamples take ~5 s
