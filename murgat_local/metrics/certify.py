"""Certified agreement with escalation for a yes/no judge (fixed-sequence testing over confidence
thresholds with exact binomial tests, as in Trust or Escalate, Jung et al., ICLR 2025,
arXiv 2407.18370). Pure functions: no I/O; scipy is imported when a test runs.

The grid and the vectorised test live here; `metrics.guarantees.certify` is the test on decoded
verdicts (the confidence of the label the judge gave), and `guarantees.certify_p_yes` the same
test read from p_yes alone, a legacy path: where the decoded label and p_yes >= 0.5 differ (a label spelt
in two tokens), it certifies a verdict other than the one scored.

A verdict is YES when p_yes >= 0.5; its confidence is max(p_yes, 1 - p_yes); at threshold t the
judge keeps the verdicts with confidence >= t and escalates the others to people. Its risk at t
is the share of kept verdicts that disagree with the human label. The certified threshold is the
lowest t (most verdicts kept) such that, with probability at least 1 - alpha over calibration
sets, the risk at t is at most 1 - target:
  * thresholds form a grid fixed in advance (`THRESHOLDS`: 0.50, 0.51, ..., 0.99, 0.995, 0.999),
    tested from the strictest down;
  * at each, H0: risk > 1 - target is tested with the exact binomial test: with n kept and k
    disagreeing, p-value = P(Binomial(n, 1 - target) <= k), rejected when <= alpha (the same as
    the one-sided Clopper-Pearson upper bound at level 1 - alpha being <= 1 - target);
  * the sequence starts at the strictest threshold that keeps at least `min_kept` verdicts
    (`MIN_KEPT`, 50): stricter ones, and any that keeps too few for a test to reject at all
    (target^n > alpha: fewer than 22 at target 0.9, alpha 0.1), are passed over, not failed, so
    one early disagreement among a handful of verdicts does not stop the sequence; which
    thresholds are skipped depends on the confidences only, never on the labels;
  * the first failed test stops the sequence; the certified threshold is the last one rejected.
    None rejected: no threshold, every verdict is escalated (coverage 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TARGET = 0.9
ALPHA = 0.1
MIN_KEPT = 50
THRESHOLDS = tuple([round(0.5 + k / 100, 2) for k in range(50)] + [0.995, 0.999])


def clopper_pearson(
    k: int, n: int, *, confidence_level: float = 0.95, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a binomial proportion, k successes in n trials (n >= 1),
    as `scipy.stats.binomtest(k, n, alternative=...).proportion_ci(method="exact")` gives it:
    `alternative` "less" gives the one-sided upper bound (0, u), "greater" (l, 1)."""
    from scipy.special import betaincinv

    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be two-sided, less or greater, not {alternative!r}")
    tail = 1 - confidence_level if alternative != "two-sided" else (1 - confidence_level) / 2
    low = 0.0 if k == 0 or alternative == "less" else float(betaincinv(k, n - k + 1, tail))
    high = 1.0 if k == n or alternative == "greater" else float(betaincinv(k + 1, n - k, 1 - tail))
    return low, high


def verdict_counts(
    p_yes: np.ndarray, human: np.ndarray, thresholds: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Per threshold: verdicts kept (confidence >= t) and kept verdicts that disagree with the
    label. `p_yes` and `human` may carry leading axes (one row per calibration set)."""
    p = np.asarray(p_yes, np.float64)
    wrong = (p >= 0.5) != (np.asarray(human) >= 0.5)
    confidence = np.maximum(p, 1 - p)
    t = np.asarray(thresholds, np.float64)
    kept = confidence[..., None, :] >= t[:, None]
    return kept.sum(axis=-1), (kept & wrong[..., None, :]).sum(axis=-1)


def fixed_sequence(
    kept: np.ndarray,
    wrong: np.ndarray,
    thresholds: Sequence[float],
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-sequence test over `thresholds` (any order; tested strictest first) given their
    counts (last axis: thresholds). Returns (index of the certified threshold or -1 per row,
    p-values, NaN where skipped: fewer than `min_kept` kept, or too few to reject)."""
    from scipy.stats import binom

    t = np.asarray(thresholds, np.float64)
    order = np.argsort(-t, kind="stable")
    kept, wrong = np.asarray(kept)[..., order], np.asarray(wrong)[..., order]
    testable = (kept >= min_kept) & (target**kept <= alpha)
    pvalue = np.where(testable, binom.cdf(wrong, np.maximum(kept, 1), 1 - target), np.nan)
    failed = testable & (pvalue > alpha)
    passed = testable & ~failed
    before_failure = np.cumsum(failed, axis=-1) == 0
    ok = passed & before_failure
    # the last rejected threshold before the first failure (positions are strictest first)
    pos = np.where(ok, np.arange(t.size), -1).max(axis=-1)
    certified = np.where(pos >= 0, order[np.maximum(pos, 0)], -1)
    pvalues = np.empty_like(pvalue)
    pvalues[..., order] = pvalue
    return certified, pvalues
