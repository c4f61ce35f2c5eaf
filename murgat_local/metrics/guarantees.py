"""Guarantees a notebook can call: certified thresholds that stay certified after a judge is
chosen and through a cascade, and PPI++ means with small-sample intervals. Pure: no I/O; scipy
is imported when a test runs.

- `certify`: Trust or Escalate's fixed-sequence test (Jung et al., ICLR 2025, arXiv 2407.18370)
  on the decoded verdicts: `confidence` is the probability of the verdict the judge gave, `agree`
  whether a person gave the same label. Thresholds on the fixed grid `THRESHOLDS` are tested from
  the strictest down, starting at the strictest that keeps at least `min_kept` verdicts, each
  with the exact binomial test of H0 "risk > 1 - target"; the first failure stops the sequence.
  Which thresholds are skipped depends on the confidences only, never on the labels, so the
  sequence is still fixed in advance and the guarantee holds: with probability >= 1 - alpha over
  calibration sets, the kept verdicts disagree with people at most 1 - target of the time.
- `select_then_certify`: choosing a judge by its agreement on the same labels that certify it
  breaks that guarantee (the lucky candidate wins). The labelled items are split at random: the
  choice is made on one part, the certificate on the other, which the choice never saw.
- `certify_cascade`: each judge of a cascade certified on what reaches it (see its docstring).
- `ppi_mean`: the PPI++ mean with a t interval (labels drawn at random are assumed).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .calibration import labelled_pairs
from .certify import ALPHA, MIN_KEPT, TARGET, THRESHOLDS, clopper_pearson, fixed_sequence

# One value per item: a list, a tuple or a numpy array.
Values = Sequence | np.ndarray


@dataclass(frozen=True)
class ThresholdTest:
    """One step of the sequence. `result`: "rejected" (H0 rejected: risk <= 1 - target),
    "failed" (stops the sequence), "too few" (keeps fewer than `min_kept`, or too few for any
    test to reject: skipped) or "not reached" (after a failure)."""

    threshold: float
    kept: int
    disagree: int
    p_value: float | None
    result: str


@dataclass(frozen=True)
class Certificate:
    """A certified confidence threshold. `threshold` None: nothing certified, every verdict
    escalated (`coverage` 0). `n`: the calibration verdicts it was tested on; `kept` those at or
    above the threshold, `coverage` = kept / n; `agreement` their observed agreement;
    `risk_upper` the one-sided Clopper-Pearson upper bound of their risk at 1 - alpha. `tests`:
    every grid threshold, strictest first. `split`: how the labelled items were divided before
    certifying (None: all of them certified this)."""

    threshold: float | None
    coverage: float
    n: int
    kept: int
    agreement: float | None
    risk_upper: float | None
    target: float
    alpha: float
    min_kept: int
    tests: tuple[ThresholdTest, ...]
    note: str | None
    split: Mapping | None = None

    def as_dict(self) -> dict:
        """JSON-able: the keys `metrics.certify.certify` returns, plus `min_kept` (and `split`
        when there is one)."""
        out: dict = {
            "threshold": self.threshold,
            "target": self.target,
            "alpha": self.alpha,
            "n": self.n,
            "coverage": self.coverage,
            "kept": self.kept,
            "agreement": self.agreement,
            "risk_upper": self.risk_upper,
            "tests": [dataclasses.asdict(t) for t in self.tests],
            "note": self.note,
            "min_kept": self.min_kept,
        }
        if self.split is not None:
            out["split"] = dict(self.split)
        return out


def _confidences(values: Values) -> np.ndarray:
    """Floats; None (no confidence recorded) as NaN, which no threshold keeps."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return values.astype(np.float64).reshape(-1)
    return np.array([np.nan if v is None else float(v) for v in values], np.float64)


def _booleans(values: Values, what: str) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype == bool:
        return values.reshape(-1)
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v not in (0, 1):
            raise ValueError(f"{what} must be booleans (True/False or 1/0), got {v!r}")
        out.append(bool(v))
    return np.array(out, dtype=bool)


def _check(target: float, alpha: float, min_kept: int) -> None:
    if not (0 < target < 1 and 0 < alpha < 1):
        raise ValueError(f"target and alpha must lie in (0, 1), got {target}, {alpha}")
    if int(min_kept) != min_kept or min_kept < 1:
        raise ValueError(f"min_kept must be a whole number >= 1, got {min_kept}")


def certify(
    confidence: Values,
    agree: Values,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
    thresholds: Sequence[float] = THRESHOLDS,
) -> Certificate:
    """The lowest grid threshold whose kept verdicts agree with people at least `target` of the
    time, with probability >= 1 - `alpha` (fixed-sequence test, see the module docstring).

    Args:
        confidence: per calibration verdict, the probability of the label the judge decoded
            (None or NaN: no confidence, never kept, still counted in `n`).
        agree: per verdict, whether the person's label is the judge's.
        min_kept: the sequence starts at the strictest threshold keeping at least this many;
            stricter ones, and any keeping too few for a test to reject, are skipped.
    """
    _check(target, alpha, min_kept)
    c = _confidences(confidence)
    a = _booleans(agree, "agree")
    if c.size != a.size:
        raise ValueError(f"confidence and agree differ in length: {c.size} and {a.size}")
    n = int(c.size)
    grid = np.asarray(thresholds, np.float64)
    kept_at = c[None, :] >= grid[:, None]
    kept = kept_at.sum(axis=-1)
    wrong = (kept_at & ~a[None, :]).sum(axis=-1)
    best, pvalues = fixed_sequence(
        kept, wrong, thresholds, target=target, alpha=alpha, min_kept=min_kept
    )
    tests, stopped = [], False
    for i in sorted(range(grid.size), key=lambda j: -grid[j]):
        pv = float(pvalues[i])
        if stopped:
            result = "not reached"
        elif math.isnan(pv):
            result = "too few"
        elif pv <= alpha:
            result = "rejected"
        else:
            result, stopped = "failed", True
        tests.append(
            ThresholdTest(
                float(grid[i]), int(kept[i]), int(wrong[i]), None if math.isnan(pv) else pv, result
            )
        )
    unrated = int(np.isnan(c).sum())
    unrated_note = f"; {unrated} verdicts without a confidence, never kept" if unrated else ""
    b = int(best)
    if b < 0:
        if n == 0:
            reason = "no labelled verdicts"
        elif stopped:
            reason = "the strictest testable threshold failed"
        else:
            reason = f"no threshold keeps enough verdicts to test (min_kept {min_kept})"
        threshold, m, k, upper = None, 0, 0, None
        note: str | None = f"nothing certified ({reason}): every verdict escalated{unrated_note}"
    else:
        threshold, k, m = float(grid[b]), int(wrong[b]), int(kept[b])
        upper = clopper_pearson(k, m, confidence_level=1 - alpha, alternative="less")[1]
        note = unrated_note[2:] or None
    return Certificate(
        threshold=threshold,
        coverage=m / n if m else 0.0,
        n=n,
        kept=m,
        agreement=1 - k / m if m else None,
        risk_upper=upper,
        target=target,
        alpha=alpha,
        min_kept=int(min_kept),
        tests=tuple(tests),
        note=note,
    )


def split_items(
    n_or_ids: int | Sequence[Hashable], *, seed: int = 0, fraction: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split into a selection part (`fraction` of the items, rounded half up)
    and a certification part. Returns both as sorted index arrays.

    `n_or_ids`: the number of items, or their ids; with ids the split depends on the set of ids
    and the seed, not on the order they come in (they are ordered by `str` first), so the same
    labelled responses split the same way whatever file order they were read in."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    if isinstance(n_or_ids, (int, np.integer)):
        n = int(n_or_ids)
        if n < 0:
            raise ValueError(f"the number of items must be >= 0, got {n}")
        canonical = np.arange(n)
    else:
        ids = list(n_or_ids)
        if len(set(ids)) != len(ids):
            raise ValueError("the ids to split must be distinct")
        n = len(ids)
        canonical = np.array(sorted(range(n), key=lambda i: str(ids[i])), dtype=np.int64)
    order = canonical[np.random.default_rng(seed).permutation(n)]
    cut = math.floor(fraction * n + 0.5)
    return np.sort(order[:cut]), np.sort(order[cut:])


def balanced_accuracy(verdict: np.ndarray, human: np.ndarray) -> float:
    """Mean recall over the labels people gave (one label only: its recall; none: NaN)."""
    recalls = [
        float((verdict[human == v] == v).mean()) for v in (True, False) if (human == v).any()
    ]
    return float(np.mean(recalls)) if recalls else math.nan


def _pair(pair: tuple, n: int, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidences, verdicts, judged): a verdict None is an item the candidate gave no verdict
    on (`judged` False there; its verdict reads False and is never used)."""
    conf, verdict = pair
    verdict = list(verdict) if not isinstance(verdict, np.ndarray) else verdict
    judged = np.array([v is not None for v in verdict], dtype=bool)
    filled = [False if v is None else v for v in verdict]
    c, v = _confidences(conf), _booleans(filled, f"{name}'s verdicts")
    if not c.size == v.size == n:
        raise ValueError(f"{name}: {c.size} confidences and {v.size} verdicts for {n} labels")
    return c, v, judged


def select_then_certify(
    candidates: Mapping[str, tuple[Values, Values]],
    human: Values,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    seed: int = 0,
    fraction: float = 0.5,
    min_kept: int = MIN_KEPT,
    parts: tuple[Sequence[int], Sequence[int]] | None = None,
) -> tuple[str, Certificate]:
    """Choose a judge on one part of the labelled items, certify it on the other.

    Args:
        candidates: judge name -> (confidence, verdict) over the same items as `human`;
            verdict the decoded label (True: YES; None: that judge gave no verdict on the item,
            which is then neither ranked nor certified for it), confidence its probability.
        human: the people's labels (booleans).
        seed, fraction: `split_items(len(human), seed=seed, fraction=fraction)`: `fraction` of
            the items choose, the rest certify.
        parts: (selection, certification) item indices, disjoint, instead of that split: for
            items that must stay together (meta-eval splits by response, so every verdict about
            one response falls on the same side); `seed` and `fraction` are then what made them.

    The candidate with the best balanced accuracy on the selection part is chosen (ties: the
    first name in sorted order) and certified on the certification part only; its certificate's
    `split` records seed, fraction, n_select, n_certify and the winning balanced accuracy.
    Since the certification part never influenced the choice, the guarantee of `certify` holds
    for the chosen judge however many candidates there were.
    """
    _check(target, alpha, min_kept)
    if not candidates:
        raise ValueError("no candidate judges")
    y = _booleans(human, "human labels")
    pairs = {name: _pair(candidates[name], y.size, name) for name in sorted(candidates)}
    if parts is None:
        select, rest = split_items(y.size, seed=seed, fraction=fraction)
    else:
        select, rest = (np.asarray(sorted(p), dtype=np.int64) for p in parts)
        if np.intersect1d(select, rest).size or np.any((select < 0) | (select >= y.size)):
            raise ValueError("parts must be disjoint indices of the labelled items")
    chosen, score = "", -math.inf
    for name, (_, verdict, judged) in pairs.items():
        mine = select[judged[select]]
        s = balanced_accuracy(verdict[mine], y[mine])
        if s > score or not chosen:
            chosen, score = name, s
    conf, verdict, judged = pairs[chosen]
    rest = rest[judged[rest]]
    cert = certify(
        conf[rest],
        verdict[rest] == y[rest],
        target=target,
        alpha=alpha,
        min_kept=min_kept,
    )
    split = {
        "seed": seed,
        "fraction": fraction,
        "n_select": int(select.size),
        "n_certify": int(rest.size),
        "selection_balanced_accuracy": None if math.isnan(score) else score,
    }
    said = (
        f"chosen among {len(pairs)} on {select.size} labelled items, certified on the other "
        f"{rest.size}"
    )
    return chosen, dataclasses.replace(
        cert, split=split, note=f"{cert.note}; {said}" if cert.note else said
    )


def certify_cascade(
    judges: Sequence[tuple[Values, Values]],
    human: Values,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    seed: int = 0,
    min_kept: int = MIN_KEPT,
) -> list[Certificate]:
    """One certificate per judge of a cascade, in cascade order: an item is kept by the first
    judge whose confidence reaches its threshold; what none keeps goes to people.

    Nested split: the labelled items are divided at random (`seed`) into len(judges) disjoint
    parts of equal size (within one). Judge 1 is certified on part 1; judge j on the items of
    part j that judges 1..j-1 escalate under their thresholds, already fixed by parts 1..j-1;
    each test at level alpha / len(judges). Why the whole cascade holds: given the earlier
    thresholds, part j is a fresh random sample, so its escalated items are a random sample of
    what reaches judge j, and judge j's risk on the items reaching it that it keeps is at most
    1 - target except with probability alpha / len(judges). By the union bound (Bonferroni) all
    judges hold together with probability >= 1 - alpha, and then so does the cascade: its risk
    on everything kept is a weighted mean of the judges' risks. A judge with no certified
    threshold keeps nothing; everything reaching it goes on (said in its note).

    Each certificate's `n` counts the items of its part that reach the judge, `coverage` the
    share of them it keeps, `alpha` its own level; `split` records seed, parts, part, n_part,
    n_reaching and the cascade's alpha.
    """
    _check(target, alpha, min_kept)
    if not judges:
        raise ValueError("no judges in the cascade")
    y = _booleans(human, "human labels")
    pairs = [_pair(p, y.size, f"judge {j + 1}") for j, p in enumerate(judges)]
    for j, (_, _, judged) in enumerate(pairs):
        if not judged.all():
            raise ValueError(f"judge {j + 1} has no verdict on some items: a cascade asks each")
    count = len(pairs)
    parts = np.array_split(np.random.default_rng(seed).permutation(y.size), count)
    level = alpha / count
    reaching = np.ones(y.size, dtype=bool)  # escalated by every judge placed so far
    out = []
    for j, ((conf, verdict, _), part) in enumerate(zip(pairs, parts)):
        here = np.zeros(y.size, dtype=bool)
        here[part] = True
        here &= reaching
        cert = certify(
            conf[here], verdict[here] == y[here], target=target, alpha=level, min_kept=min_kept
        )
        where = f"part {j + 1} of {count} ({part.size} labelled items, {int(here.sum())} reach it)"
        if cert.threshold is None:
            onward = "the next judge" if j + 1 < count else "people"
            said = f"keeps nothing: everything reaching it goes on to {onward}; tested on {where}"
        else:
            said = f"certified on {where}, at alpha {alpha:g} / {count}"
            reaching &= ~(conf >= cert.threshold)
        split = {
            "seed": seed,
            "parts": count,
            "part": j + 1,
            "n_part": int(part.size),
            "n_reaching": int(here.sum()),
            "alpha_cascade": alpha,
        }
        out.append(
            dataclasses.replace(
                cert, split=split, note=f"{cert.note}; {said}" if cert.note else said
            )
        )
    return out


def ppi_mean(
    y_labelled: Values,
    f_labelled: Values,
    f_unlabelled: Values,
    *,
    level: float = 0.95,
    dist: str = "t",
) -> tuple[float, float, float]:
    """The PPI++ mean (power-tuned lambda, as `metrics.ppi.ppi_rows`) and its interval.

    Args:
        y_labelled: people's scores of the n labelled responses, a uniform random sample of all
            (labels taken in file order or on chosen responses void the interval).
        f_labelled, f_unlabelled: the judge's scores of the labelled and of the other responses.
        level: the interval's confidence level.
        dist: "t" (default): theta +- t(n - 1) se at every n, which is the normal interval's
            width times a factor that tends to 1 (1.07 at n = 20, 1.02 at n = 60), so it covers
            at small n and there is no jump at any n; "normal": theta +- z se.

    Returns (estimate, low, high). n >= 2; with no unlabelled responses, the human mean.
    """
    from scipy import stats

    from .ppi import ppi_rows

    y, fl, fu = (np.asarray(v, np.float64) for v in (y_labelled, f_labelled, f_unlabelled))
    if y.ndim != 1 or y.size != fl.size:
        raise ValueError(f"y_labelled and f_labelled differ in length: {y.size} and {fl.size}")
    if y.size < 2:
        raise ValueError(f"an interval needs at least 2 labelled responses, got {y.size}")
    if np.isnan(y).any() or np.isnan(fl).any() or np.isnan(fu).any():
        raise ValueError("scores must not be missing (NaN): leave those responses out")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if fu.size:
        theta, se, _ = (float(v) for v in ppi_rows(y, fl, fu))
    else:
        theta, se = float(y.mean()), float(y.std(ddof=1) / math.sqrt(y.size))
    if dist == "t":
        q = float(stats.t.ppf(0.5 + level / 2, y.size - 1))
    elif dist == "normal":
        q = float(stats.norm.ppf(0.5 + level / 2))
    else:
        raise ValueError(f"dist must be 't' or 'normal', not {dist!r}")
    return theta, theta - q * se, theta + q * se


__all__ = [
    "Certificate",
    "ThresholdTest",
    "balanced_accuracy",
    "certify",
    "certify_cascade",
    "certify_p_yes",
    "ppi_mean",
    "select_then_certify",
    "split_items",
]


def certify_p_yes(
    p_yes: Sequence,
    human: Sequence,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    thresholds: Sequence[float] = THRESHOLDS,
    min_kept: int = MIN_KEPT,
) -> dict:
    """The certified confidence threshold of one yes/no stage on a calibration set (p_yes, human
    label; pairs with None left out), the verdict read as p_yes >= 0.5 (legacy: prefer
    `metrics.guarantees.certify` on the decoded verdicts).

    Returns `guarantees.Certificate.as_dict()`: {"threshold" (None: none certified), "target",
    "alpha", "n" (calibration pairs), "coverage" (share of them kept at the threshold; 0.0 with
    none), "kept", "agreement" (share of kept verdicts that agree), "risk_upper" (one-sided
    Clopper-Pearson upper bound of the risk at 1 - alpha), "tests" (per threshold, strictest
    first: threshold, kept, disagree, p_value, result "rejected" / "failed" / "too few" / "not
    reached"), "note", "min_kept"}.
    """
    p, y = labelled_pairs(p_yes, human)
    return certify(
        np.maximum(p, 1 - p),
        (p >= 0.5) == (y >= 0.5),
        target=target,
        alpha=alpha,
        min_kept=min_kept,
        thresholds=thresholds,
    ).as_dict()
