"""The guarantees' Python API checked from outside: p-values as scipy's binomial test, the sequence
as a plain loop, PPI++ as written out by hand, and the guarantees themselves on simulated judges
whose agreement at every confidence is known (choosing among equal judges, a two-judge cascade,
intervals at n = 20), with the old ways shown to break on the same simulations."""

from __future__ import annotations

import json
import math
import statistics as st

import numpy as np
import pytest
from scipy import stats

from murgat_local.metrics.certify import THRESHOLDS
from murgat_local.metrics.guarantees import (
    balanced_accuracy,
    certify,
    certify_cascade,
    certify_p_yes,
    ppi_mean,
    select_then_certify,
    split_items,
)

TARGET, ALPHA = 0.9, 0.1
OLD_KEYS = {
    "threshold",
    "target",
    "alpha",
    "n",
    "coverage",
    "kept",
    "agreement",
    "risk_upper",
    "tests",
    "note",
}


def _groups(groups):
    """(confidence, agree) from (confidence, count, disagreeing) groups."""
    conf, agree = [], []
    for c, count, wrong in groups:
        conf += [c] * count
        agree += [False] * wrong + [True] * (count - wrong)
    return conf, agree


def _loop(conf, agree, min_kept):
    """Fixed-sequence testing written out plainly, scipy's binomial test at each step."""
    certified = None
    for t in sorted(THRESHOLDS, reverse=True):
        kept = [a for c, a in zip(conf, agree) if c >= t]
        m = len(kept)
        if m < min_kept or TARGET**m > ALPHA:  # skipped: too few kept, or no test can reject
            continue
        p = stats.binomtest(m - sum(kept), m, 1 - TARGET, alternative="less").pvalue
        if p > ALPHA:
            break
        certified = t
    return certified


# A judge of known truth: confidence 1 - u^2 / 2 (u uniform: most verdicts sure), disagreeing
# with probability 0.035 + 0.6 (1 - c). Among verdicts at or above t the risk is
# 0.035 + 0.2 (1 - t): above 0.1 below t = 0.68 on the grid (0.67: 0.101; 0.68: 0.099), so a
# certified 0.67 or lower is a violation.


def _judge(rng, shape):
    conf = 1 - rng.random(shape) ** 2 / 2
    return conf, rng.random(shape) >= 0.035 + 0.6 * (1 - conf)


def _violates(threshold):
    return threshold is not None and 0.035 + 0.2 * (1 - threshold) > 1 - TARGET


def _sigma(draws, p=ALPHA):
    return math.sqrt(p * (1 - p) / draws)


# ---------------------------------------------------------------- certify


def test_each_p_value_is_scipys_binomial_test_and_the_sequence_stops_at_the_first_failure():
    # 0.95: 60 agree; 0.75: 60 more, 4 disagree; 0.55: 80 more, 30 disagree
    conf, agree = _groups([(0.95, 60, 0), (0.75, 60, 4), (0.55, 80, 30)])
    got = certify(conf, agree, thresholds=(0.9, 0.7, 0.5))
    assert [t.result for t in got.tests] == ["rejected", "rejected", "failed"]
    for t in got.tests:
        ref = stats.binomtest(t.disagree, t.kept, 0.1, alternative="less").pvalue
        assert t.p_value == pytest.approx(ref, rel=1e-9)
    assert (got.threshold, got.kept, got.n, got.coverage) == (0.7, 120, 200, 0.6)
    assert got.agreement == pytest.approx(116 / 120)
    ci = stats.binomtest(4, 120, alternative="less").proportion_ci(0.9, method="exact")
    assert got.risk_upper == pytest.approx(ci.high, rel=1e-9) and got.min_kept == 50
    d = got.as_dict()
    assert set(d) == OLD_KEYS | {"min_kept"} and d["tests"][1]["kept"] == 120
    json.dumps(d, allow_nan=False)


def test_the_sequence_starts_where_min_kept_verdicts_are_kept():
    # 30 verdicts at 0.995, one wrong: a start there (the first that can reject) fails at once;
    # with min_kept 50 it is skipped, and the lowest threshold above the 0.6 group (130 kept,
    # 3 wrong) is certified
    conf, agree = _groups([(0.995, 30, 1), (0.95, 100, 2), (0.6, 100, 40)])
    late = certify(conf, agree, min_kept=50)
    early = certify(conf, agree, min_kept=1)
    assert early.threshold is None and "failed" in early.note
    assert late.threshold == 0.61 and late.kept == 130
    skipped = [t for t in late.tests if t.result == "too few"]
    assert [t.threshold for t in skipped] == [0.999, 0.995, 0.99, 0.98, 0.97, 0.96]
    assert all(t.kept < 50 and t.p_value is None for t in skipped)
    assert late.tests[len(skipped)].result == "rejected"  # the first tested: 0.95, 130 kept
    assert _loop(conf, agree, 50) == late.threshold and _loop(conf, agree, 1) is None


@pytest.mark.parametrize("min_kept", [1, 22, 50, 80])
def test_the_sequence_is_a_plain_loops_on_random_sets(min_kept):
    rng = np.random.default_rng(min_kept)
    for _ in range(40):
        n = int(rng.integers(30, 300))
        conf, agree = _judge(rng, n)
        assert certify(conf, agree, min_kept=min_kept).threshold == _loop(
            list(conf), list(agree), min_kept
        )


def test_no_labels_no_confidence_and_bad_arguments():
    empty = certify([], [])
    assert empty.threshold is None and empty.n == 0 and empty.coverage == 0.0 and empty.note
    # a verdict without a confidence is never kept but counts in n
    conf, agree = _groups([(0.99, 60, 0)])
    got = certify(conf + [None, float("nan")], agree + [True, True])
    assert got.threshold == 0.5 and got.n == 62 and got.kept == 60 and "2 verdicts" in got.note
    with pytest.raises(ValueError):
        certify([0.9], [True], target=1.0)
    with pytest.raises(ValueError):
        certify([0.9], [None])
    with pytest.raises(ValueError):
        certify([0.9], [True], min_kept=0)
    with pytest.raises(ValueError, match="length"):
        certify([0.9, 0.8], [True])


def test_the_verdict_certified_is_the_decoded_one():
    # 60 decoded YES at p_yes 0.45 (a label spelt in two tokens), all agreeing with people: its
    # confidence is 0.45, below every threshold; read from p_yes they would pass as NO at 0.55
    got = certify([0.45] * 60, [True] * 60, min_kept=1)
    assert got.threshold is None and all(t.kept == 0 for t in got.tests)
    # the legacy p_yes path is the decoded test on max(p, 1 - p) and p >= 0.5
    rng = np.random.default_rng(3)
    p = rng.random(300)
    y = rng.random(300) < p
    old = certify_p_yes(list(p), list(y))
    new = certify(np.maximum(p, 1 - p), (p >= 0.5) == y).as_dict()
    assert old == new


def test_a_single_judge_certified_over_800_sets_holds_at_its_nominal_rate():
    rng = np.random.default_rng(7)
    sets, n = 800, 400
    conf, agree = _judge(rng, (sets, n))
    thresholds = [certify(conf[s], agree[s]).threshold for s in range(sets)]
    bad = np.array([_violates(t) for t in thresholds])
    assert bad.mean() <= ALPHA + 3 * _sigma(sets)
    assert np.mean([t is not None for t in thresholds]) > 0.5  # not vacuous


# ---------------------------------------------------------------- select, then certify


def test_split_items_is_seeded_disjoint_and_ignores_the_order_of_ids():
    a, b = split_items(11, seed=4, fraction=0.5)
    assert a.size == 6 and b.size == 5 and sorted(np.concatenate([a, b])) == list(range(11))
    assert all(np.array_equal(x, y) for x, y in zip((a, b), split_items(11, seed=4)))
    assert not np.array_equal(a, split_items(11, seed=5)[0])
    ids = [f"r{i}" for i in range(20)]
    one = {ids[i] for i in split_items(ids, seed=1, fraction=0.25)[0]}
    shuffled = ids[::-1]
    two = {shuffled[i] for i in split_items(shuffled, seed=1, fraction=0.25)[0]}
    assert one == two and len(one) == 5
    with pytest.raises(ValueError):
        split_items(10, fraction=1.0)
    with pytest.raises(ValueError):
        split_items(["a", "a"])


def test_the_best_judge_on_the_selection_part_is_certified_on_the_other():
    rng = np.random.default_rng(11)
    n = 600
    human = rng.random(n) < 0.4
    conf = rng.uniform(0.5, 1, n)
    good = np.where(rng.random(n) < 0.95, human, ~human)
    poor = np.where(rng.random(n) < 0.7, human, ~human)
    name, cert = select_then_certify(
        {"poor": (conf, poor), "good": (conf, good), "twin": (conf, good)}, human, seed=3
    )
    assert name == "good"  # ties: the first name in sorted order
    sel, rest = split_items(n, seed=3)
    want = certify(conf[rest], good[rest] == human[rest])
    assert cert.threshold == want.threshold and cert.n == want.n == rest.size
    assert cert.split["n_select"] == sel.size and cert.split["seed"] == 3
    assert cert.split["selection_balanced_accuracy"] == pytest.approx(
        balanced_accuracy(good[sel], human[sel])
    )
    assert "certified on the other" in cert.note
    json.dumps(cert.as_dict(), allow_nan=False)


def test_given_parts_and_items_a_judge_did_not_judge():
    """meta-eval splits by response (`parts`), and each run judges its own items (None)."""
    rng = np.random.default_rng(5)
    n = 400
    human = rng.random(n) < 0.5
    conf = rng.uniform(0.5, 1, n)
    right = np.where(rng.random(n) < 0.9, human, ~human)
    # "sparse" is perfect where it judged, and judged only a third of the items
    judged = rng.random(n) < 1 / 3
    sparse = [bool(h) if j else None for h, j in zip(human, judged)]
    groups = rng.integers(0, 80, n)  # 80 responses; their items stay on one side
    chosen_groups = set(range(0, 80, 2))
    select = [i for i in range(n) if groups[i] in chosen_groups]
    rest = [i for i in range(n) if groups[i] not in chosen_groups]
    name, cert = select_then_certify(
        {"dense": (conf, right), "sparse": (conf, sparse)}, human, parts=(select, rest)
    )
    assert name == "sparse"  # ranked on what it judged only
    mine = [i for i in rest if judged[i]]
    want = certify(conf[mine], human[mine] == human[mine])
    assert cert.n == len(mine) == cert.split["n_certify"]
    assert cert.threshold == want.threshold and cert.kept == want.kept
    assert cert.split["n_select"] == len(select)
    with pytest.raises(ValueError, match="disjoint"):
        select_then_certify({"dense": (conf, right)}, human, parts=(select, select[:3]))


@pytest.mark.parametrize("k", [1, 30])
def test_choosing_among_equal_judges_keeps_the_guarantee_on_disjoint_labels(k):
    """The chosen judge's certified threshold violates in at most alpha of the sets; chosen and
    certified on the same labels (the old way), the best of 30 violates far more often."""
    rng = np.random.default_rng(100 + k)
    sets, n = 500, 400
    split, same = np.zeros(sets, bool), np.zeros(sets, bool)
    for s in range(sets):
        human = rng.random(n) < 0.5
        conf, agree = _judge(rng, (k, n))
        verdict = np.where(agree, human, ~human)
        cands = {f"j{i:02d}": (conf[i], verdict[i]) for i in range(k)}
        _, cert = select_then_certify(cands, human, seed=s)
        split[s] = _violates(cert.threshold)
        best = int(np.argmax([balanced_accuracy(verdict[i], human) for i in range(k)]))
        same[s] = _violates(certify(conf[best], agree[best]).threshold)
    assert split.mean() <= ALPHA + 3 * _sigma(sets)
    if k == 30:
        assert same.mean() > ALPHA + 5 * _sigma(sets)


# ---------------------------------------------------------------- cascades
# Half the items are hard. Judge 1 is sure of the easy ones: confidence U(0.8, 1) on them,
# U(0.5, 0.8) on hard ones, wrong with probability 1 - c. Judge 2's confidence is U(0.5, 1) on
# both, wrong with probability (1 - c) times 0.5 on easy items and 1.5 on hard ones: 1 - c on
# average, more on what judge 1 escalates. Every risk below is exact (integrals of linear
# functions over uniform confidences).


def _cascade_items(rng, n):
    hard = rng.random(n) < 0.5
    c1 = np.where(hard, rng.uniform(0.5, 0.8, n), rng.uniform(0.8, 1, n))
    c2 = rng.uniform(0.5, 1, n)
    a1 = rng.random(n) >= 1 - c1
    a2 = rng.random(n) >= (1 - c2) * np.where(hard, 1.5, 0.5)
    return c1, c2, a1, a2


def _reach_and_keep1(t1):
    """(P(easy, reaches 2), P(hard, reaches 2), P(kept by 1), E[errors of 1])."""
    if t1 is None:
        return 0.5, 0.5, 0.0, 0.0

    def part(lo, hi, t):  # P(c >= t) and E[(1 - c) 1{c >= t}] for c ~ U(lo, hi), weight 0.5
        a = min(max(t, lo), hi)
        share = (hi - a) / (hi - lo)
        return 0.5 * share, 0.5 * share * (1 - (a + hi) / 2)

    ke, ee = part(0.8, 1.0, t1)
    kh, eh = part(0.5, 0.8, t1)
    return 0.5 - ke, 0.5 - kh, ke + kh, ee + eh


def _cascade_risks(t1, t2):
    """(judge 2's risk on what reaches it and it keeps, the cascade's risk on what it keeps)."""
    easy, hard, k1, e1 = _reach_and_keep1(t1)
    if t2 is None:
        k2 = e2 = 0.0
    else:
        share = (1 - t2) / 0.5
        k2 = (easy + hard) * share
        e2 = (0.5 * easy + 1.5 * hard) * share * (1 - t2) / 2
    stage2 = e2 / k2 if k2 else 0.0
    return stage2, (e1 + e2) / (k1 + k2) if k1 + k2 else 0.0


def test_each_judge_of_a_cascade_is_certified_on_what_reaches_it():
    rng = np.random.default_rng(21)
    n = 1000
    human = rng.random(n) < 0.5
    c1, c2, a1, a2 = _cascade_items(rng, n)
    v1, v2 = np.where(a1, human, ~human), np.where(a2, human, ~human)
    first, second = certify_cascade([(c1, v1), (c2, v2)], human, seed=5)
    parts = np.array_split(np.random.default_rng(5).permutation(n), 2)
    assert first.n == parts[0].size and first.alpha == pytest.approx(ALPHA / 2)
    want1 = certify(c1[parts[0]], a1[parts[0]], alpha=ALPHA / 2)
    assert first.threshold == want1.threshold is not None
    reach = parts[1][c1[parts[1]] < first.threshold]
    want2 = certify(c2[reach], a2[reach], alpha=ALPHA / 2)
    assert (second.threshold, second.n) == (want2.threshold, reach.size)
    assert second.split["part"] == 2 and second.split["n_reaching"] == reach.size
    # a judge nothing certifies keeps nothing, and says where its items go
    *_, last = certify_cascade([(c1, v1), (np.full(n, 0.6), ~human)], human, seed=5)
    assert last.threshold is None and "goes on to people" in last.note
    only = certify_cascade([(c1, v1)], human, seed=5)
    assert len(only) == 1 and only[0].n == n and only[0].alpha == ALPHA


def test_a_two_judge_cascade_keeps_its_guarantee_over_600_sets():
    """The whole cascade's risk exceeds 1 - target in at most alpha of the sets (and judge 2's
    on what reaches it); judge 2 certified on its whole run (the old way) is not."""
    rng = np.random.default_rng(2024)
    sets, n = 600, 1200
    whole, stage2, old = (np.zeros(sets, bool) for _ in range(3))
    certified = 0
    for s in range(sets):
        human = rng.random(n) < 0.5
        c1, c2, a1, a2 = _cascade_items(rng, n)
        v1, v2 = np.where(a1, human, ~human), np.where(a2, human, ~human)
        first, second = certify_cascade([(c1, v1), (c2, v2)], human, seed=s)
        r2, r = _cascade_risks(first.threshold, second.threshold)
        stage2[s], whole[s] = r2 > 1 - TARGET + 1e-12, r > 1 - TARGET + 1e-12
        certified += second.threshold is not None
        o1, o2 = certify(c1, a1).threshold, certify(c2, a2).threshold
        old[s] = _cascade_risks(o1, o2)[0] > 1 - TARGET + 1e-12
    bound = ALPHA + 3 * _sigma(sets)
    assert whole.mean() <= bound and stage2.mean() <= bound
    assert certified > sets / 3  # not vacuous
    assert old.mean() > ALPHA + 5 * _sigma(sets)


# ---------------------------------------------------------------- PPI++


def _ppi_by_hand(y, f_l, f_u, level):
    n, m = len(y), len(f_u)
    var_f = st.variance(list(f_l) + list(f_u))
    lam = min(1.0, max(0.0, st.covariance(list(y), list(f_l)) / ((1 + n / m) * var_f)))
    theta = st.mean(y) + lam * (st.mean(f_u) - st.mean(f_l))
    rect = [a - lam * b for a, b in zip(y, f_l)]
    se = math.sqrt(st.variance(rect) / n + lam**2 * var_f / m)
    q = stats.t.ppf(0.5 + level / 2, n - 1)
    return theta, theta - q * se, theta + q * se


def test_ppi_mean_is_ppi_plus_plus_written_out():
    rng = np.random.default_rng(8)
    y = rng.random(12)
    f_l = y + rng.normal(0.1, 0.1, 12)
    f_u = rng.random(40) + 0.1
    for level in (0.9, 0.95):
        assert ppi_mean(y, f_l, f_u, level=level) == pytest.approx(
            _ppi_by_hand(y, f_l, f_u, level), rel=1e-9
        )
    est, lo, hi = ppi_mean(y, f_l, [])  # nothing to correct with: the human mean, t interval
    half = stats.t.ppf(0.975, 11) * st.stdev(y) / math.sqrt(12)
    assert (est, lo, hi) == pytest.approx((st.mean(y), st.mean(y) - half, st.mean(y) + half))
    with pytest.raises(ValueError):
        ppi_mean([1.0], [1.0], [0.5])
    with pytest.raises(ValueError):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [0.5], dist="bootstrap")


def test_ppi_intervals_at_n_20_cover_on_random_labels_and_miss_on_the_lowest_scored():
    rng = np.random.default_rng(44)
    draws, n, size, truth = 5000, 20, 300, 0.5
    y = rng.uniform(0, 1, (draws, size))
    f = y + 0.15 + rng.normal(0, 0.1, (draws, size))
    t_cov = norm_cov = low_cov = 0
    for d in range(draws):
        lab, rest = np.arange(n), np.arange(n, size)  # the rows are independent draws
        _, lo, hi = ppi_mean(y[d, lab], f[d, lab], f[d, rest])
        t_cov += lo <= truth <= hi
        _, lo, hi = ppi_mean(y[d, lab], f[d, lab], f[d, rest], dist="normal")
        norm_cov += lo <= truth <= hi
        if d < 500:
            order = np.argsort(f[d])
            _, lo, hi = ppi_mean(y[d, order[:n]], f[d, order[:n]], f[d, order[n:]])
            low_cov += lo <= truth <= hi
    assert t_cov / draws >= 0.93 and t_cov > norm_cov
    assert low_cov / 500 < 0.05  # labels on chosen responses void the interval
