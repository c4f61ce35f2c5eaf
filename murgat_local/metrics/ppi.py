"""Means corrected by people: prediction-powered inference (PPI, Angelopoulos et al., Science 2023)
with power tuning (PPI++, Angelopoulos, Duchi and Zrnic, arXiv 2311.01453). Pure: no I/O, no scipy.

A run's N responses carry a judge score f (MURGAT-S, coverage or F1); people scored n of them
(y), chosen at random. With f_l, y the n labelled and f_u the N - n others:
  * judge only:  mean of f over all N (biased by the judge's errors);
  * human only:  mean of y over the n labelled;
  * PPI++:       theta = mean(y) + lambda * (mean(f_u) - mean(f_l)), the human mean corrected
                 by how the judge's mean moves from the labelled to the other responses;
                 lambda = Cov(y, f_l) / ((1 + n / (N - n)) Var(f)), clipped to [0, 1], the
                 variance-minimising weight (lambda 0: the human-only mean, so it is never
                 worse than that but for the noise in lambda), Var(f) over all N;
                 se^2 = Var(y - lambda f_l) / n + lambda^2 Var(f) / (N - n).
All three intervals are normal (CLT) intervals mean +- z se with sample variances (ddof 1), so
their widths compare. Responses without a judge score are left out of all three (one
population for the three); an interval needs two values (with N - n = 0, lambda is 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from .stats import CONFIDENCE


def _z(confidence_level: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence_level / 2)


def ppi_rows(
    y: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray
) -> tuple[np.ndarray, ...]:
    """PPI++ along the last axis (leading axes: independent samples, for simulations).
    Returns (theta, se, lambda); n >= 2 labelled and N - n >= 1 others."""
    n, m = y.shape[-1], f_unlabelled.shape[-1]
    f_all = np.concatenate([f_labelled, f_unlabelled], axis=-1)
    var_f = np.var(f_all, axis=-1, ddof=1)
    cov = ((y - y.mean(-1, keepdims=True)) * (f_labelled - f_labelled.mean(-1, keepdims=True))).sum(
        -1
    ) / (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(var_f > 0, cov / ((1 + n / m) * np.where(var_f > 0, var_f, 1)), 0.0)
    lam = np.clip(lam, 0.0, 1.0)
    theta = y.mean(-1) + lam * (f_unlabelled.mean(-1) - f_labelled.mean(-1))
    rectifier = y - lam[..., None] * f_labelled
    se = np.sqrt(np.var(rectifier, axis=-1, ddof=1) / n + lam**2 * var_f / m)
    return theta, se, lam


def _normal(values: np.ndarray, z: float) -> dict:
    n = int(values.size)
    out: dict = {"n": n, "mean": float(values.mean()) if n else None, "ci": None, "note": None}
    if n == 0:
        out["note"] = "no values"
    elif n == 1:
        out["note"] = "one value: an interval needs at least two"
    else:
        half = z * float(np.std(values, ddof=1)) / math.sqrt(n)
        out["ci"] = [out["mean"] - half, out["mean"] + half]
    return out


def corrected_mean(
    judge: Sequence, human: Sequence, *, confidence_level: float = CONFIDENCE
) -> dict:
    """The judge-only, human-only and PPI++ means of one metric, each with its normal interval.

    `judge` and `human` are aligned per response; `human` is None where no person scored it.
    Returns {"judge_only", "human_only", "ppi": {"n", "mean", "ci", "note"} (ppi also
    "n_unlabelled", "lambda"), "left_out" (responses without a judge score), "confidence_level"}.
    """
    f = np.array([np.nan if v is None else float(v) for v in judge], np.float64)
    h = np.array([np.nan if v is None else float(v) for v in human], np.float64)
    if f.size != h.size:
        raise ValueError(f"judge and human scores differ in length: {f.size} and {h.size}")
    scored = ~np.isnan(f)
    left_out = int((~scored).sum())
    f, h = f[scored], h[scored]
    labelled = ~np.isnan(h)
    y, f_l, f_u = h[labelled], f[labelled], f[~labelled]
    z = _z(confidence_level)
    ppi = {**_normal(y, z), "n_unlabelled": int(f_u.size), "lambda": None}
    if y.size >= 2 and f_u.size:
        theta, se, lam = ppi_rows(y, f_l, f_u)
        ppi.update(
            {
                "mean": float(theta),
                "ci": [float(theta - z * se), float(theta + z * se)],
                "lambda": float(lam),
            }
        )
    elif y.size:  # lambda cannot be tuned, or there is nothing to correct with: the human mean
        ppi["lambda"] = 0.0
        ppi["note"] = ppi["note"] or "every scored response is labelled: the human-only mean"
    return {
        "judge_only": _normal(f, z),
        "human_only": _normal(y, z),
        "ppi": ppi,
        "left_out": left_out,
        "confidence_level": confidence_level,
    }
