"""How far annotators agree with each other, and a run's judges with each of them, per subtask.

Responses, sentences and facts are paired exactly as `murgat meta-eval` pairs them
(`meta.agreement`: sentences aligned by text, facts matched one to one by `FACT_MATCH`), and its
`evaluate` gives the same statistics it reports (accuracy, balanced accuracy, fact precision /
recall / F1, score correlations with bootstrap intervals). On the same pairs this adds two
chance-corrected agreements for the yes/no subtasks: Cohen's kappa and Krippendorff's alpha
(nominal). Verifiability is also given as one alpha over every annotator together (the sentences
are the same for all: one split of one source).

Kappa and alpha are `metrics.agreement`'s, added to the pairs by `meta.agreement.with_chance_agreement`
(what `murgat meta-eval` reports for a second annotator too); an undefined value is None with a
note, never 0 and never NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from ..meta.agreement import align, with_chance_agreement
from ..meta.views import ResponseView
from ..metrics.agreement import krippendorff_alpha


def paired_labels(
    truth: Mapping[str, ResponseView], other: Mapping[str, ResponseView]
) -> dict[str, list]:
    """The (truth, other) label pairs per yes/no subtask, paired as `murgat meta-eval` pairs them
    (`meta.agreement.align`): verifiable per aligned sentence; entailed per matched fact; precise
    per citation of a matched fact both say is entailed."""
    a = align(other, truth)
    return {"subtask1": a.subtask1, "subtask3": a.subtask3, "precise": a.precise}


def agreement(
    humans: Mapping[str, Mapping[str, ResponseView]],
    judge: Mapping[str, ResponseView] | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """Every pair of annotators, each annotator against the judge, and verifiability across all.

    Args:
        humans: per annotator, their finished responses as views (`meta.views.from_labels`).
        judge: a run's annotations by response id (`meta.views.from_record`), or None.
    """
    names = sorted(humans)
    out: dict = {
        "annotators": names,
        "responses": {a: len(humans[a]) for a in names},
        "pairs": [],
        "judge": [],
    }
    for a, b in combinations(names, 2):
        shared = len(set(humans[a]) & set(humans[b]))
        out["pairs"].append(
            {
                "a": a,
                "b": b,
                "shared": shared,
                **with_chance_agreement(humans[a], humans[b], resamples=resamples, seed=seed),
            }
        )
    if judge:
        for a in names:
            out["judge"].append(
                {
                    "annotator": a,
                    **with_chance_agreement(humans[a], judge, resamples=resamples, seed=seed),
                }
            )
    units = []
    for rid in sorted(set().union(*(humans[a] for a in names)) if names else ()):
        views = [humans[a].get(rid) for a in names]
        present = [v for v in views if v is not None]
        if len(present) < 2:
            continue
        for i in range(len(present[0].sentences)):
            units.append(
                [
                    v.sentences[i].verifiable if v is not None and i < len(v.sentences) else None
                    for v in views
                ]
            )
    out["all_annotators"] = {"subtask1": {"alpha": krippendorff_alpha(units)}}
    return out


__all__ = ["agreement", "paired_labels"]
