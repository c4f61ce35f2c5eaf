"""Check the guarantees of `murgat_local.metrics.guarantees` from outside, by simulations whose
truth is known (judges with a known agreement at every confidence), with a fixed seed.

1. choosing the best of K = 1, 6, 30 judges of equal quality, then certifying it: on disjoint
   labels (`select_then_certify`) and, for contrast, on the same labels (the old way);
2. a two-judge cascade (`certify_cascade`) against each judge certified on its whole run;
3. where the sequence starts: `min_kept` 50 against an independent loop starting at 50 and the
   old start (the first threshold that can reject, min_kept 1), at n = 400;
4. PPI++ intervals at n = 20: t against normal, labels drawn at random against the lowest-scored.

Prints, per guarantee, the violation rate with its standard error beside its target, and the
coverage. Pure numpy/scipy, no model. Usage:
    python scripts/bench_validity.py [--sets 1000] [--draws 5000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time

import numpy as np

from murgat_local.metrics.certify import THRESHOLDS
from murgat_local.metrics.guarantees import (
    balanced_accuracy,
    certify,
    certify_cascade,
    ppi_mean,
    select_then_certify,
)

TARGET, ALPHA = 0.9, 0.1
LIMIT = 1 - TARGET
GRID = np.array(THRESHOLDS)
START = time.perf_counter()


def say(line: str = "") -> None:
    print(line, flush=True)


def rate(flags: np.ndarray, goal: float, what: str = "violated") -> str:
    """`flags`' mean with its binomial standard error, beside the most it may be."""
    p, n = float(np.mean(flags)), flags.size
    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
    ok = "ok" if p <= goal + 2 * se else "ABOVE TARGET"
    return f"{what} {p:.3f} +- {se:.3f} (target <= {goal:g}; {ok})"


# ------------------------------------------------------------------ judges of known truth
# The judge of parts 1 and 3: confidence 1 - u^2 / 2 (u uniform, most verdicts sure), disagreeing
# with probability 0.03 + 0.9 (1 - confidence): some sure verdicts are wrong too. Among the
# verdicts at or above t the risk is 0.03 + 0.3 (1 - t): at most 0.1 from t = 0.77 on the grid,
# where it keeps sqrt(2 (1 - t)) = 68% of them.


def judge(rng: np.random.Generator, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    conf = 1 - rng.random(shape) ** 2 / 2
    return conf, rng.random(shape) >= 0.03 + 0.9 * (1 - conf)  # agree


def judge_risk(t: np.ndarray) -> np.ndarray:
    return 0.03 + 0.3 * (1 - t)


def judge_coverage(t: np.ndarray) -> np.ndarray:
    return np.sqrt(2 * (1 - t))


def verdicts(agree: np.ndarray, human: np.ndarray) -> np.ndarray:
    return np.where(agree, human, ~human)


def violated(threshold: float | None, risk) -> bool:
    return threshold is not None and float(risk(np.array(threshold))) > LIMIT


# ------------------------------------------------------------------ 1. select, then certify


def part_selection(rng: np.random.Generator, sets: int, n: int = 400) -> None:
    say(f"1. choose the best of K equal judges, then certify (n = {n} labelled, {sets} sets)")
    for k in (1, 6, 30):
        split, same, kept = np.zeros(sets, bool), np.zeros(sets, bool), np.zeros(sets)
        for s in range(sets):
            human = rng.random(n) < 0.5
            conf, agree = judge(rng, (k, n))
            cands = {f"j{i:02d}": (conf[i], verdicts(agree[i], human)) for i in range(k)}
            _, cert = select_then_certify(cands, human, target=TARGET, alpha=ALPHA, seed=s)
            split[s] = violated(cert.threshold, judge_risk)
            kept[s] = cert.coverage
            # the old way: chosen and certified on the same labels
            scores = [balanced_accuracy(cands[c][1], human) for c in sorted(cands)]
            best = int(np.argmax(scores))
            old = certify(conf[best], agree[best], target=TARGET, alpha=ALPHA)
            same[s] = violated(old.threshold, judge_risk)
        say(
            f"   K = {k:2d}  disjoint halves: {rate(split, ALPHA)}, mean coverage {kept.mean():.2f}"
        )
        say(f"           same labels (old): {rate(same, ALPHA)}")


# ------------------------------------------------------------------ 2. a two-judge cascade
# Items differ in difficulty d ~ U(0, 1). Judge 1 is sure of the easy ones: confidence
# 1 - clip(d + N(0, 0.2), 0, 1) / 2, wrong with probability 1 - confidence + 0.03. Judge 2's
# confidence ignores difficulty (1 - u^2 / 2) but its errors do not: wrong with probability
# (1 - c) (0.25 + 1.5 d), on average over all items 1 - c, and more on the hard items judge 1
# escalates. True risks come from the expected errors of a population of 2,000,000 items.


def cascade_draw(rng: np.random.Generator, shape: tuple) -> tuple[np.ndarray, ...]:
    d = rng.random(shape)
    c1 = 1 - np.clip(d + rng.normal(0, 0.2, shape), 0, 1) / 2
    c2 = 1 - rng.random(shape) ** 2 / 2
    w1 = np.minimum(1 - c1 + 0.03, 1)
    w2 = np.minimum((1 - c2) * (0.25 + 1.5 * d), 1)
    return c1, c2, w1, w2


class CascadeTruth:
    """Expected kept counts and errors of the cascade at every pair of grid thresholds."""

    def __init__(self, rng: np.random.Generator, size: int = 2_000_000):
        c1, c2, w1, w2 = cascade_draw(rng, (size,))
        g = GRID.size
        # grid position: thresholds (ascending) at or below the confidence; kept at i iff > i
        a = np.searchsorted(GRID, c1, side="right")
        b = np.searchsorted(GRID, c2, side="right")
        self.size = size
        n1, e1 = np.bincount(a, minlength=g + 1), np.bincount(a, weights=w1, minlength=g + 1)
        # kept by judge 1 at i: positions > i
        self.kept1 = np.concatenate([n1[::-1].cumsum()[::-1][1:], [0]])[:g]
        self.err1 = np.concatenate([e1[::-1].cumsum()[::-1][1:], [0]])[:g]
        h = np.zeros((g + 1, g + 1))
        e = np.zeros((g + 1, g + 1))
        np.add.at(h, (a, b), 1)
        np.add.at(e, (a, b), w2)
        # reaching judge 2 under threshold index i (a <= i) and kept at k (b > k); index g:
        # judge 1 keeps nothing (everything reaches judge 2)
        reach_h, reach_e = h.cumsum(axis=0), e.cumsum(axis=0)
        self.kept2 = reach_h[:, ::-1].cumsum(axis=1)[:, ::-1][:, 1:]
        self.err2 = reach_e[:, ::-1].cumsum(axis=1)[:, ::-1][:, 1:]

    def risks(self, t1: float | None, t2: float | None) -> tuple[float, float]:
        """(judge 2's risk on what reaches it, the whole cascade's risk on what it keeps)."""
        i = GRID.size if t1 is None else int(np.flatnonzero(np.isclose(GRID, t1))[0])
        k1 = 0.0 if t1 is None else self.kept1[i]
        e1 = 0.0 if t1 is None else self.err1[i]
        if t2 is None:
            k2 = e2 = 0.0
        else:
            j = int(np.flatnonzero(np.isclose(GRID, t2))[0])
            k2, e2 = self.kept2[i, j], self.err2[i, j]
        stage2 = e2 / k2 if k2 else 0.0
        whole = (e1 + e2) / (k1 + k2) if k1 + k2 else 0.0
        return stage2, whole


def kept_share(c1: np.ndarray, c2: np.ndarray, t1: float | None, t2: float | None) -> float:
    on1 = np.zeros(c1.size, bool) if t1 is None else c1 >= t1
    on2 = np.zeros(c2.size, bool) if t2 is None else c2 >= t2
    return float((on1 | on2).mean())


def part_cascade(rng: np.random.Generator, sets: int, n: int = 1200) -> None:
    say(f"2. a two-judge cascade (n = {n} labelled, {sets} sets; true risks on 2,000,000)")
    truth = CascadeTruth(rng)
    new = {"stage 2": np.zeros(sets, bool), "cascade": np.zeros(sets, bool)}
    old = {"stage 2": np.zeros(sets, bool), "cascade": np.zeros(sets, bool)}
    kept, kept_old = np.zeros(sets), np.zeros(sets)
    for s in range(sets):
        c1, c2, w1, w2 = cascade_draw(rng, (n,))
        human = rng.random(n) < 0.5
        v1 = verdicts(rng.random(n) >= w1, human)
        v2 = verdicts(rng.random(n) >= w2, human)
        first, second = certify_cascade(
            [(c1, v1), (c2, v2)], human, target=TARGET, alpha=ALPHA, seed=s
        )
        stage2, whole = truth.risks(first.threshold, second.threshold)
        new["stage 2"][s], new["cascade"][s] = stage2 > LIMIT, whole > LIMIT
        kept[s] = kept_share(c1, c2, first.threshold, second.threshold)
        # the old way: each judge certified on its whole run, all labels, alpha each
        o1 = certify(c1, v1 == human, target=TARGET, alpha=ALPHA).threshold
        o2 = certify(c2, v2 == human, target=TARGET, alpha=ALPHA).threshold
        kept_old[s] = kept_share(c1, c2, o1, o2)
        stage2, whole = truth.risks(o1, o2)
        old["stage 2"][s], old["cascade"][s] = stage2 > LIMIT, whole > LIMIT
    say(f"   nested split: whole cascade {rate(new['cascade'], ALPHA)}")
    say(f"                 judge 2 on what reaches it {rate(new['stage 2'], ALPHA)}")
    say(f"                 share of the labelled items the cascade keeps: {kept.mean():.2f}")
    say(f"   old (each judge on its whole run): whole cascade {rate(old['cascade'], ALPHA)}")
    say(f"                 judge 2 on what reaches it {rate(old['stage 2'], ALPHA)}")
    say(f"                 share of the labelled items the cascade keeps: {kept_old.mean():.2f}")


# ------------------------------------------------------------------ 3. where the sequence starts


def loop_certify(conf: np.ndarray, agree: np.ndarray, start: int) -> float | None:
    """Fixed-sequence testing written out plainly, exact binomial tails by math.comb."""
    certified = None
    for t in sorted(THRESHOLDS, reverse=True):
        kept = conf >= t
        m = int(kept.sum())
        if m < start:
            continue
        k = int((~agree[kept]).sum())
        p = sum(math.comb(m, i) * LIMIT**i * TARGET ** (m - i) for i in range(k + 1))
        if p > ALPHA:
            break
        certified = t
    return certified


def flat(rng: np.random.Generator, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Risk 0.11 at every confidence: any certified threshold is a violation."""
    return rng.uniform(0.5, 1, shape), rng.random(shape) >= 0.11


def part_start(rng: np.random.Generator, sets: int, n: int = 400) -> None:
    say(f"3. where the sequence starts (n = {n}, {sets} sets)")
    conf, agree = judge(rng, (sets, n))
    rows = {"min_kept 50": 50, "independent loop from 50": None, "old start (min_kept 1)": 1}
    for label, start in rows.items():
        got = []
        for s in range(sets):
            if start is None:
                got.append(loop_certify(conf[s], agree[s], 50))
            else:
                got.append(certify(conf[s], agree[s], min_kept=start).threshold)
        t = np.array([np.nan if g is None else g for g in got])
        certified = ~np.isnan(t)
        bad = certified & (judge_risk(np.where(certified, t, 1)) > LIMIT)
        cover = np.where(certified, judge_coverage(np.where(certified, t, 1)), 0)
        say(
            f"   {label:26s} certified in {certified.mean():.3f} of sets, mean coverage "
            f"{cover.mean():.2f}; {rate(bad, ALPHA)}"
        )
        if start == 50:
            mine = t
        elif start is None:
            same = np.mean((np.isnan(mine) & np.isnan(t)) | (mine == t))
            say(f"   {'':26s} the same threshold as min_kept 50 in {same:.3f} of sets")
    conf, agree = flat(rng, (sets, n))
    bad = np.array([certify(conf[s], agree[s]).threshold is not None for s in range(sets)])
    say(f"   a judge at risk 0.11 everywhere (min_kept 50): {rate(bad, ALPHA)}")


# ------------------------------------------------------------------ 4. PPI++ intervals
# A run of N = 500 responses; the judge's score f is biased and noisy. Two kinds of people's
# scores y: uniform on [0, 1], f = y + 0.15 + N(0, 0.1) (truth E[y] = 0.5); and skewed,
# y ~ Beta(2, 5), f = clip(y + 0.1 + N(0, 0.1), 0, 1) (truth 2 / 7).


def ppi_runs(rng: np.random.Generator, kind: str, shape: tuple) -> tuple[np.ndarray, ...]:
    if kind == "uniform":
        y = rng.uniform(0, 1, shape)
        return y, y + 0.15 + rng.normal(0, 0.1, shape), np.array(0.5)
    y = rng.beta(2, 5, shape)
    return y, np.clip(y + 0.1 + rng.normal(0, 0.1, shape), 0, 1), np.array(2 / 7)


def part_ppi(rng: np.random.Generator, draws: int, n: int = 20, size: int = 500) -> None:
    say(f"4. PPI++ 95% intervals, n = {n} labelled of {size} ({draws} draws per kind of score)")
    for kind in ("uniform", "skewed"):
        y, f, truth = ppi_runs(rng, kind, (draws, size))
        miss: dict[str, list[bool]] = {
            "t, random labels": [],
            "normal, random labels": [],
            "t, lowest-scored labels": [],
        }
        for d in range(draws):
            order = rng.permutation(size)
            lab, rest = order[:n], order[n:]
            for key, dist in (("t, random labels", "t"), ("normal, random labels", "normal")):
                _, lo, hi = ppi_mean(y[d, lab], f[d, lab], f[d, rest], dist=dist)
                miss[key].append(not lo <= truth <= hi)
            low = np.argsort(f[d], kind="stable")
            lab, rest = low[:n], low[n:]
            _, lo, hi = ppi_mean(y[d, lab], f[d, lab], f[d, rest])
            miss["t, lowest-scored labels"].append(not lo <= truth <= hi)
        for key, flags in miss.items():
            covered = ~np.array(flags)
            p = float(covered.mean())
            se = math.sqrt(max(p * (1 - p), 1e-12) / covered.size)
            ok = "ok" if p >= 0.93 - 2 * se else "BELOW"
            say(
                f"   {kind:7s} {key:24s} coverage {p:.3f} +- {se:.3f} "
                f"(nominal 0.95, required >= 0.93; {ok})"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=1000, help="simulated sets for parts 1-3")
    ap.add_argument("--draws", type=int, default=5000, help="simulated draws for part 4")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in open("/proc/cpuinfo")
            if ln.startswith("model name")
        ),
        "unknown",
    )
    say(f"date {datetime.date.today()}; cpu {cpu}; python {sys.version.split()[0]}")
    say(f"target {TARGET}, alpha {ALPHA}; seed {args.seed}")
    rng = np.random.default_rng(args.seed)
    for part in (
        lambda: part_selection(rng, args.sets),
        lambda: part_cascade(rng, args.sets),
        lambda: part_start(rng, args.sets),
        lambda: part_ppi(rng, args.draws),
    ):
        part()
        say(f"   ({time.perf_counter() - START:.0f} s so far)")


if __name__ == "__main__":
    main()
