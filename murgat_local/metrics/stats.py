"""Intervals, paired comparisons and correlations over per-response scores. Pure functions: no I/O.

Every result is a plain dict of JSON values: a number that cannot be defined (no values, constant
scores, too few pairs) is None with a `note` saying why; never 0 and never NaN, and no scipy
warning escapes.

Method (the same everywhere):
  * Intervals are percentile bootstrap intervals over responses: `scipy.stats.bootstrap` with
    `method="percentile"`, `confidence_level` 0.95, `n_resamples` 10,000 and a fixed seed
    (`rng=np.random.default_rng(seed)`, seed 0) unless told otherwise; two-sample statistics are
    resampled in pairs (`paired=True`). Percentile rather than BCa: BCa needs a jackknife
    (n statistics over n - 1 values, O(n^2)), which does not scale to 100,000 responses.
    The statistic is vectorized and resamples are drawn in batches of about 260,000 values
    (`batch_size`), so memory stays flat (a few MB) whatever n is and a mean over 100,000
    values takes a few seconds; the batch size does not change a number (the generator's
    stream is the same, drawn in one piece or in several).
    The one-sample interval of a mean (every interval of a summary) is computed here with numpy
    exactly as `scipy.stats.bootstrap` computes it (the same index draws, means and linear
    quantiles: the same numbers, tested), so that scoring never imports scipy (80 MB and 3 s per
    process); comparisons and correlations import it when they run.
  * An interval needs two values: with one it is None (note); when all values are equal every
    resample has the same mean and the interval is [v, v] (note).
  * The paired p-value is a two-sided permutation test of the mean difference that flips the
    sign of each within-pair difference: `scipy.stats.permutation_test((a - b,), np.mean,
    permutation_type="samples")`, exact when 2^n <= n_resamples. scipy draws these sign flips
    one pair at a time (~0.7 ms per pair at 10,000 resamples), so when n * n_resamples exceeds
    `SCIPY_PERMUTATION_LIMIT` (n > 5,000 at 10,000 resamples) the same test (same null
    distribution, same +1 correction, same tie tolerance) is drawn here with vectorized sign
    flips from the same seed: the p-value then agrees with scipy's up to Monte Carlo error
    (not digit for digit), in seconds for 100,000 pairs.
  * Correlations: `scipy.stats.pearsonr` / `spearmanr` / `kendalltau` (tau-b) with their
    p-values; undefined (None, note) for fewer than 3 pairs or constant scores on either side.
    Their interval is a paired percentile bootstrap. A resample with constant scores on a side
    has no correlation: such resamples are left out, the interval is the percentiles of the
    others (scipy's own percentiles when there is none) and the note says how many were left
    out; with fewer than two defined resamples the interval is None.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

RESAMPLES = 10_000
CONFIDENCE = 0.95
SEED = 0
BATCH_VALUES = 2**18  # resampled values held at once (per sample)
SCIPY_PERMUTATION_LIMIT = 5 * 10**7  # n * n_resamples up to which scipy draws the permutations
KINDS = ("pearson", "spearman", "kendall")


PERMUTATION = (
    "two-sided paired permutation test of the mean difference (sign flips; "
    "scipy.stats.permutation_test, permutation_type='samples')"
)


def method(
    n_resamples: int = RESAMPLES, confidence_level: float = CONFIDENCE, seed: int = SEED
) -> dict:
    """How the intervals are computed, for a summary or a report."""
    return {
        "method": "percentile bootstrap over responses (scipy.stats.bootstrap, paired for two samples)",
        "confidence_level": confidence_level,
        "resamples": n_resamples,
        "seed": seed,
    }


def batch_size(n: int, n_resamples: int) -> int:
    """Resamples per vectorized batch: about `BATCH_VALUES` values in memory at once."""
    return max(1, min(n_resamples, BATCH_VALUES // max(n, 1)))


def _floats(values: Iterable) -> np.ndarray:
    """The values as a float array, without None and NaN."""
    if isinstance(values, np.ndarray):
        arr = values.astype(np.float64, copy=False).ravel()
    else:
        arr = np.fromiter((float(v) for v in values if v is not None), np.float64)
    return arr[~np.isnan(arr)]


def _column(values) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False).ravel()
    return np.array([np.nan if v is None else float(v) for v in values], np.float64)


def _pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """The pairs whose two values are both known (not None, not NaN), as two float arrays."""
    x, y = _column(a), _column(b)
    if x.size != y.size:
        raise ValueError(f"paired samples differ in length: {x.size} and {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _interval(low, high) -> list[float] | None:
    low, high = float(low), float(high)
    return [low, high] if math.isfinite(low) and math.isfinite(high) else None


def _stats():
    """scipy.stats, imported when a comparison or correlation first needs it."""
    from scipy import stats

    return stats


@contextmanager
def _quiet() -> Iterator[None]:
    """Neither scipy nor numpy warns inside (every undefined value becomes a note)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _bootstrap(
    data: tuple,
    statistic,
    *,
    n_resamples: int,
    confidence_level: float,
    seed: int,
    vectorized: bool = True,
):
    """`scipy.stats.bootstrap` as every helper here calls it."""
    n = len(data[0])
    with _quiet():
        return _stats().bootstrap(
            data,
            statistic,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            method="percentile",
            vectorized=vectorized,
            paired=len(data) > 1,
            batch=batch_size(n, n_resamples),
            rng=np.random.default_rng(seed),
        )


def mean_ci(
    values: Iterable,
    *,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """The mean of `values` (None and NaN left out) and its percentile bootstrap interval.

    Returns {"n", "mean", "ci": [low, high] or None, "note"}. No values: mean None. One value,
    or `n_resamples` 0: ci None. All values equal: ci [v, v]. `note` says which.
    """
    x = _floats(values)
    n = int(x.size)
    out: dict = {"n": n, "mean": float(np.mean(x)) if n else None, "ci": None, "note": None}
    if n == 0:
        out["note"] = "no values"
    elif n_resamples <= 0:
        out["note"] = "intervals disabled (0 resamples)"
    elif n == 1:
        out["note"] = "one value: an interval needs at least two"
    elif x.min() == x.max():
        v = float(x[0])
        out.update(mean=v, ci=[v, v], note="all values are equal: every resample has the same mean")
    else:
        low, high = _mean_bootstrap(x, n_resamples, confidence_level, seed)
        out["ci"] = _interval(low, high)
        if out["ci"] is None:
            out["note"] = "the bootstrap interval is undefined"
    return out


def _mean_bootstrap(
    x: np.ndarray, n_resamples: int, confidence_level: float, seed: int
) -> tuple[float, float]:
    """The percentile interval `scipy.stats.bootstrap((x,), np.mean, method="percentile",
    rng=np.random.default_rng(seed))` gives, computed the same way without scipy."""
    rng = np.random.default_rng(seed)
    n = x.size
    means = np.empty(n_resamples, dtype=np.float64)
    step = batch_size(n, n_resamples)
    for k in range(0, n_resamples, step):
        b = min(step, n_resamples - k)
        means[k : k + b] = np.mean(x[rng.integers(0, n, (b, n))], axis=-1)
    means.sort()
    alpha = (1 - confidence_level) / 2
    return _quantile(means, alpha), _quantile(means, 1 - alpha)


def _quantile(y: np.ndarray, p: float) -> float:
    """Hyndman and Fan's type 7 ("linear") quantile of sorted `y`, written as `scipy.stats.quantile`
    computes it (numpy's interpolation rounds differently in the last place)."""
    n = y.size
    jg = p * n + (1 - p)
    jp1 = math.floor(jg)
    j = jp1 - 1
    g = 0.0 if j < 0 else jg % 1
    j, jp1 = min(max(j, 0), n - 1), min(max(jp1, 0), n - 1)
    return float((1 - g) * y[j] + g * y[jp1])


def _signflip_pvalue(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided randomized sign-flip test of mean(d), as `scipy.stats.permutation_test((d,),
    np.mean, permutation_type="samples")` defines it (not exact: n is large), vectorized."""
    rng = np.random.default_rng(seed)
    n, total = d.size, float(d.sum())
    observed = float(np.mean(d))
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    below = above = 0
    batch = batch_size(n, n_resamples)
    done = 0
    while done < n_resamples:
        k = min(batch, n_resamples - done)
        keep = rng.integers(0, 2, (k, n), dtype=np.bool_)  # True: d_i, False: -d_i
        null = (2.0 * (keep @ d) - total) / n
        below += int(np.count_nonzero(null <= observed + gamma))
        above += int(np.count_nonzero(null >= observed - gamma))
        done += k
    return min(1.0, 2 * min(below + 1, above + 1) / (n_resamples + 1))


def permutation_pvalue(d: np.ndarray, *, n_resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """Two-sided paired permutation p-value of mean(d) (d: within-pair differences)."""
    n = int(d.size)
    if n * n_resamples <= SCIPY_PERMUTATION_LIMIT or 2 ** min(n, 64) <= n_resamples:
        with _quiet():
            res = _stats().permutation_test(
                (d,),
                np.mean,
                permutation_type="samples",
                vectorized=True,
                n_resamples=n_resamples,
                batch=batch_size(n, n_resamples),
                alternative="two-sided",
                rng=np.random.default_rng(seed),
            )
        return float(res.pvalue)
    return _signflip_pvalue(d, n_resamples, seed)


def paired_difference(
    a: Sequence,
    b: Sequence,
    *,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """Mean of a - b over the pairs where both are known, its paired bootstrap interval and the
    paired permutation p-value.

    Returns {"n", "mean_a", "mean_b", "difference", "ci", "p_value", "note"}. The interval is
    `scipy.stats.bootstrap((a, b), mean(a - b), paired=True)` (the same numbers as bootstrapping
    the differences); with no pairs every number is None, with one the interval and the p-value.
    """
    x, y = _pairs(a, b)
    d = x - y
    n = int(d.size)
    ci = mean_ci(d, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    out = {
        "n": n,
        "mean_a": float(np.mean(x)) if n else None,
        "mean_b": float(np.mean(y)) if n else None,
        "difference": ci["mean"],
        "ci": ci["ci"],
        "p_value": None,
        "note": None,
    }
    if n == 0:
        out["note"] = "no pair has both values"
        return out
    notes = []
    if ci["note"]:
        notes.append(ci["note"].replace("values are", "differences are"))
    if n == 1:  # scipy's permutation test needs two observations
        notes.append("one pair: no permutation test")
    elif n_resamples > 0:
        p = permutation_pvalue(d, n_resamples=n_resamples, seed=seed)
        out["p_value"] = p if math.isfinite(p) else None
        if out["p_value"] is None:
            notes.append("the permutation p-value is undefined")
    out["note"] = "; ".join(notes) or None
    return out


def _ranks(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return _stats().rankdata(x, axis=axis)


def _pearson_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's r along `axis`, NaN where either side is constant."""
    xm = x - x.mean(axis=axis, keepdims=True)
    ym = y - y.mean(axis=axis, keepdims=True)
    r = (xm * ym).sum(axis=axis) / np.sqrt((xm * xm).sum(axis=axis) * (ym * ym).sum(axis=axis))
    constant = (np.ptp(x, axis=axis) == 0) | (np.ptp(y, axis=axis) == 0)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _spearman_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _pearson_rows(_ranks(x, axis), _ranks(y, axis), axis)


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return _stats().kendalltau(x, y).statistic


_POINT = {"pearson": "pearsonr", "spearman": "spearmanr", "kendall": "kendalltau"}
_RESAMPLED = {
    "pearson": (_pearson_rows, True),
    "spearman": (_spearman_rows, True),
    "kendall": (_kendall, False),
}


def correlation(
    x: Sequence | np.ndarray,
    y: Sequence | np.ndarray,
    kind: str = "pearson",
    *,
    ci: bool = True,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """Pearson, Spearman or Kendall (tau-b) correlation of the pairs where both values are known.

    Returns {"kind", "n", "value", "p_value", "ci", "note"}: value and p-value from scipy;
    ci a paired percentile bootstrap interval (when `ci` and `n_resamples` > 0). Fewer than 3
    pairs, or constant scores on either side: value None with a note. Resamples with constant
    scores are left out of the interval, and counted in the note.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    x, y = _pairs(x, y)
    n = int(x.size)
    out: dict = {"kind": kind, "n": n, "value": None, "p_value": None, "ci": None, "note": None}
    if n < 3:
        out["note"] = f"undefined: {n} pair(s), a correlation needs at least 3"
        return out
    constant = [name for name, v in (("x", x), ("y", y)) if np.ptp(v) == 0]
    if constant:
        out["note"] = f"undefined: constant scores ({' and '.join(constant)})"
        return out
    with _quiet():
        res = getattr(_stats(), _POINT[kind])(x, y)
    value, p = float(res.statistic), float(res.pvalue)
    if not math.isfinite(value):
        out["note"] = "undefined: scipy returned no value"
        return out
    out["value"] = value
    out["p_value"] = p if math.isfinite(p) else None
    notes = [] if out["p_value"] is not None else ["the p-value is undefined"]
    if ci and n_resamples > 0:
        statistic, vectorized = _RESAMPLED[kind]
        boot = _bootstrap(
            (x, y),
            statistic,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            seed=seed,
            vectorized=vectorized,
        )
        out["ci"] = _interval(boot.confidence_interval.low, boot.confidence_interval.high)
        if out["ci"] is None:  # some resamples have constant scores: their correlation is undefined
            dist = boot.bootstrap_distribution
            defined = dist[np.isfinite(dist)]
            left_out = f"{dist.size - defined.size} of {dist.size} resamples have constant scores"
            if defined.size >= 2:
                tail = (1 - confidence_level) / 2 * 100
                out["ci"] = _interval(*np.percentile(defined, [tail, 100 - tail]))
                notes.append(f"{left_out}: the interval is over the other {defined.size}")
            else:
                notes.append(f"interval undefined: {left_out}")
    elif ci:
        notes.append("intervals disabled (0 resamples)")
    out["note"] = "; ".join(notes) or None
    return out
