"""How far annotators agree with each other, and a run's judges with each of them, per subtask.

Responses, sentences and facts are paired exactly as `murgat meta-eval` pairs them
(`meta.agreement`: sentences aligned by text, facts matched one to one by `FACT_MATCH`), and its
`evaluate` gives the same statistics it reports (accuracy, balanced accuracy, fact precision /
recall / F1, score correlations with bootstrap intervals). On the same pairs this adds two
chance-corrected agreements for the yes/no subtasks: Cohen's kappa and Krippendorff's alpha
(nominal). Verifiability is also given as one alpha over every annotator together (the sentences
are the same for all: one split of one source).

Kappa and alpha are pure functions here; an undefined value (no pair, a single category in the
data) is None with a note, never 0 and never NaN.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations
from typing import Hashable, Mapping, Sequence

from ..meta.agreement import align, evaluate
from ..meta.views import ResponseView


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> dict:
    """Cohen's kappa of two raters' labels on the same units: {"n", "value", "observed", "note"}."""
    n = len(pairs)
    out = {"n": n, "value": None, "observed": None, "note": None}
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
    coincidences: Counter = Counter()
    pairable = 0
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        pairable += 1
        for a, b in permutations(range(m), 2):
            coincidences[(values[a], values[b])] += 1 / (m - 1)
    totals: Counter = Counter()
    for (c, _), w in coincidences.items():
        totals[c] += w
    n = sum(totals.values())
    out = {"units": pairable, "values": round(n), "value": None, "note": None}
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


def paired_labels(truth: Mapping[str, ResponseView], other: Mapping[str, ResponseView]) -> dict[str, list]:
    """The (truth, other) label pairs per yes/no subtask, paired as `murgat meta-eval` pairs them
    (`meta.agreement.align`): verifiable per aligned sentence; entailed per matched fact; precise
    per citation of a matched fact both say is entailed."""
    a = align(other, truth)
    return {"subtask1": a.subtask1, "subtask3": a.subtask3, "precise": a.precise}


def compare(truth: Mapping[str, ResponseView], other: Mapping[str, ResponseView], *,
            resamples: int = 10_000, seed: int = 0) -> dict:
    """`murgat meta-eval`'s statistics of `other` against `truth`, with kappa and alpha added to
    the yes/no subtasks (and to `precise`, the citations' necessity)."""
    aligned = align(other, truth)
    result = evaluate(other, truth, resamples=resamples, seed=seed, aligned=aligned)
    for block in ("subtask1", "subtask3", "precise"):
        pairs = getattr(aligned, block)
        stats = result.setdefault(block, {"n": len(pairs)})
        stats["kappa"] = cohen_kappa(pairs)
        stats["alpha"] = krippendorff_alpha(pairs)
    return result


def agreement(humans: Mapping[str, Mapping[str, ResponseView]], judge: Mapping[str, ResponseView] | None = None,
              *, resamples: int = 10_000, seed: int = 0) -> dict:
    """Every pair of annotators, each annotator against the judge, and verifiability across all.

    Args:
        humans: per annotator, their finished responses as views (`meta.views.from_labels`).
        judge: a run's annotations by response id (`meta.views.from_record`), or None.
    """
    names = sorted(humans)
    out: dict = {"annotators": names, "responses": {a: len(humans[a]) for a in names},
                 "pairs": [], "judge": []}
    for a, b in combinations(names, 2):
        shared = len(set(humans[a]) & set(humans[b]))
        out["pairs"].append({"a": a, "b": b, "shared": shared,
                             **compare(humans[a], humans[b], resamples=resamples, seed=seed)})
    if judge:
        for a in names:
            out["judge"].append({"annotator": a, **compare(humans[a], judge, resamples=resamples, seed=seed)})
    units = []
    for rid in sorted(set().union(*(humans[a] for a in names)) if names else ()):
        views = [humans[a].get(rid) for a in names]
        present = [v for v in views if v is not None]
        if len(present) < 2:
            continue
        for i in range(len(present[0].sentences)):
            units.append([v.sentences[i].verifiable if v is not None and i < len(v.sentences) else None
                          for v in views])
    out["all_annotators"] = {"subtask1": {"alpha": krippendorff_alpha(units)}}
    return out


__all__ = ["agreement", "cohen_kappa", "compare", "krippendorff_alpha", "paired_labels"]
