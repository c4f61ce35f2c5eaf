"""Chance-corrected agreement between raters on nominal labels: Cohen's kappa (two raters) and
Krippendorff's alpha (any number, missing labels allowed). Pure: no I/O.

An undefined value (no unit labelled by two, a single category in the data) is None with a
note, never 0 and never NaN.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from itertools import permutations


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> dict:
    """Cohen's kappa of two raters' labels on the same units: {"n", "value", "observed", "note"}."""
    n = len(pairs)
    out: dict = {"n": n, "value": None, "observed": None, "note": None}
    if n == 0:
        out["note"] = "no unit labelled by both"
        return out
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in first) / (n * n)
    out["observed"] = observed
    if expected == 1:
        out["note"] = "undefined: both raters gave one and the same label to every unit"
        return out
    out["value"] = (observed - expected) / (1 - expected)
    return out


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> dict:
    """Krippendorff's alpha for nominal labels: each unit lists one value per coder (None: not
    coded). Units coded by fewer than two are not pairable and left out.

    Returns {"units", "values", "value", "note"}."""
    coincidences: defaultdict[tuple, float] = defaultdict(float)
    pairable = 0
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        pairable += 1
        for a, b in permutations(range(m), 2):
            coincidences[(values[a], values[b])] += 1 / (m - 1)
    totals: defaultdict[Hashable, float] = defaultdict(float)
    for (c, _), w in coincidences.items():
        totals[c] += w
    n = sum(totals.values())
    out: dict = {"units": pairable, "values": round(n), "value": None, "note": None}
    if pairable == 0:
        out["note"] = "no unit coded by two or more"
        return out
    disagree = sum(w for (c, k), w in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if expected == 0:
        out["note"] = "undefined: every value is the same category"
        return out
    out["value"] = 1 - (n - 1) * disagree / expected
    return out
