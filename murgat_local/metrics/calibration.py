"""Calibration of a yes/no judge's `p_yes` against human labels. Pure functions: no I/O, no scipy.

For pairs (p, y), p = the judge's probability of YES in [0, 1], y = the human label (1 YES, 0 NO);
pairs where either is None (or p is NaN) are left out:
  * bins: 15 equal-width bins of p over [0, 1]; bin k holds k/15 <= p < (k+1)/15, the last one
    also p = 1. Per bin: `count`, `mean_confidence` (mean p in the bin) and `observed_frequency`
    (share of human YES in the bin): the data of a reliability diagram (empty bins: None).
  * ece = sum over bins of count/n * |mean_confidence - observed_frequency|
        = sum over bins of |sum p - sum y| / n.
  * brier = mean (p - y)^2.
  * auroc = P(p of a YES pair > p of a NO pair) + P(equal) / 2 (the Mann-Whitney U / (n1 n0)):
    undefined (None, note) unless both labels occur.
Each has a percentile bootstrap interval over pairs, drawn as `stats.mean_ci` draws its resamples
(the same index draws and linear quantiles as `scipy.stats.bootstrap(..., paired=True,
method="percentile")`: the same numbers, tested), vectorized over resamples. A resample whose
AUROC is undefined (one label only) is left out of the AUROC interval, counted in the note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .stats import CONFIDENCE, RESAMPLES, SEED, _quantile, batch_size

BINS = 15


def labelled_pairs(
    p_yes: Sequence | np.ndarray, human: Sequence | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs where both are known, as float arrays (p, y); p outside [0, 1] or a label other
    than 0/1 (True/False) is a caller's error (ValueError)."""
    p = np.array([np.nan if v is None else float(v) for v in p_yes], np.float64)
    y = np.array([np.nan if v is None else float(v) for v in human], np.float64)
    if p.size != y.size:
        raise ValueError(f"p_yes and human labels differ in length: {p.size} and {y.size}")
    keep = ~(np.isnan(p) | np.isnan(y))
    p, y = p[keep], y[keep]
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError(f"p_yes must lie in [0, 1], got values in [{p.min()}, {p.max()}]")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("human labels must be YES/NO (1/0, True/False)")
    return p, y


def bin_index(p: np.ndarray, n_bins: int = BINS) -> np.ndarray:
    """The equal-width bin of each p (p = 1 in the last bin)."""
    return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)


def reliability(
    p_yes: Sequence | np.ndarray, human: Sequence | np.ndarray, n_bins: int = BINS
) -> list[dict]:
    """Per bin: `low`, `high`, `count`, `mean_confidence` (mean p_yes), `observed_frequency`
    (share of human YES); the last two None for an empty bin."""
    p, y = labelled_pairs(p_yes, human)
    b = bin_index(p, n_bins)
    count = np.bincount(b, minlength=n_bins)
    sum_p = np.bincount(b, weights=p, minlength=n_bins)
    sum_y = np.bincount(b, weights=y, minlength=n_bins)
    return [
        {
            "low": k / n_bins,
            "high": (k + 1) / n_bins,
            "count": int(count[k]),
            "mean_confidence": float(sum_p[k] / count[k]) if count[k] else None,
            "observed_frequency": float(sum_y[k] / count[k]) if count[k] else None,
        }
        for k in range(n_bins)
    ]


# Statistics over rows of resampled pair indices `idx` (b, n) -> (b,): every one also serves the
# point estimate (idx = one row of 0..n-1).


def _ece_rows(p: np.ndarray, y: np.ndarray, n_bins: int) -> Callable[[np.ndarray], np.ndarray]:
    bins = bin_index(p, n_bins)

    def ece(idx: np.ndarray) -> np.ndarray:
        rows, n = idx.shape
        key = (np.arange(rows)[:, None] * n_bins + bins[idx]).ravel()
        gap = np.bincount(key, weights=p[idx].ravel(), minlength=rows * n_bins) - np.bincount(
            key, weights=y[idx].ravel(), minlength=rows * n_bins
        )
        return np.abs(gap).reshape(rows, n_bins).sum(axis=1) / n

    return ece


def _brier_rows(p: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    sq = (p - y) ** 2
    return lambda idx: np.mean(sq[idx], axis=-1)


def _auroc_rows(p: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    levels, level = np.unique(p, return_inverse=True)  # pairs with equal p share a level
    u = levels.size

    def auroc(idx: np.ndarray) -> np.ndarray:
        rows = idx.shape[0]
        key = (np.arange(rows)[:, None] * u + level[idx]).ravel()
        pos = np.bincount(key, weights=y[idx].ravel(), minlength=rows * u).reshape(rows, u)
        neg = np.bincount(key, weights=1 - y[idx].ravel(), minlength=rows * u).reshape(rows, u)
        below = np.cumsum(neg, axis=1) - neg  # NO pairs with a lower p
        wins = (pos * (below + 0.5 * neg)).sum(axis=1)
        pairs = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pairs > 0, wins / np.where(pairs > 0, pairs, 1), np.nan)

    return auroc


def bootstrap_rows(
    n: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[list[float] | None, int]:
    """Percentile bootstrap interval of `statistic` over resampled indices of n paired values,
    drawn as `stats.mean_ci` draws them (scipy's paired bootstrap). Returns (interval or None,
    resamples left out because the statistic is NaN there)."""
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples, dtype=np.float64)
    step = batch_size(n, n_resamples)
    for k in range(0, n_resamples, step):
        b = min(step, n_resamples - k)
        values[k : k + b] = statistic(rng.integers(0, n, (b, n)))
    defined = np.sort(values[~np.isnan(values)])
    left_out = n_resamples - defined.size
    if defined.size < 2:
        return None, left_out
    alpha = (1 - confidence_level) / 2
    low, high = _quantile(defined, alpha), _quantile(defined, 1 - alpha)
    return ([low, high] if math.isfinite(low) and math.isfinite(high) else None), left_out


def calibration(
    p_yes: Sequence,
    human: Sequence,
    *,
    n_bins: int = BINS,
    n_resamples: int = RESAMPLES,
    confidence_level: float = CONFIDENCE,
    seed: int = SEED,
) -> dict:
    """Calibration of one yes/no stage: `n`, `n_yes`, `ece`, `brier`, `auroc`, each with
    `<name>_ci` ([low, high] or None), `bins` (the reliability diagram, see `reliability`) and
    `notes` ({name: why a value or an interval is missing}). No pairs: every value None."""
    p, y = labelled_pairs(p_yes, human)
    n, n_yes = int(p.size), int(y.sum())
    out: dict = {
        "n": n,
        "n_yes": n_yes,
        "ece": None,
        "ece_ci": None,
        "brier": None,
        "brier_ci": None,
        "auroc": None,
        "auroc_ci": None,
        "bins": reliability(p, y, n_bins),
        "notes": {},
    }
    notes = out["notes"]
    if n == 0:
        notes.update(ece="no labelled pairs", brier="no labelled pairs", auroc="no labelled pairs")
        return out
    stats = {"ece": _ece_rows(p, y, n_bins), "brier": _brier_rows(p, y), "auroc": _auroc_rows(p, y)}
    whole = np.arange(n)[None, :]
    for name, statistic in stats.items():
        value = float(statistic(whole)[0])
        if math.isnan(value):
            notes[name] = (
                f"undefined: the human labels are all {'YES' if n_yes else 'NO'} (AUROC needs both)"
            )
            continue
        out[name] = value
        if n_resamples <= 0:
            notes[name] = "intervals disabled (0 resamples)"
        elif n == 1:
            notes[name] = "one pair: an interval needs at least two"
        else:
            ci, left_out = bootstrap_rows(
                n, statistic, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed
            )
            out[f"{name}_ci"] = ci
            if left_out:
                notes[name] = f"{left_out} of {n_resamples} resamples have one label only: " + (
                    "the interval is over the others" if ci else "no interval"
                )
    return out
