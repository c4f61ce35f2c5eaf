"""best.toml's `[escalation]`: each judge's own thresholds, and the cascades `murgat score
--escalate-to` can ask, each judge of a cascade certified on what the judges before it escalate
(`metrics.guarantees.certify_cascade`). No model call: read from recorded judgements.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..metrics.certify import ALPHA, MIN_KEPT, TARGET
from ..metrics.guarantees import certify_cascade
from .agreement import Aligned, Judgement, binary
from .calibrate import CERTIFIED, Split, decoded_confidence

# Cascades certified per stage: the chosen judge first, then orders of the others up to this
# many judges in all, at most `MAX_CASCADES` of them (the best-ranked others first).
CASCADE_LENGTH = 3
MAX_CASCADES = 24


@dataclass(frozen=True)
class Measured:
    """One run's stage judges (summary.json's `models`) and its judgements paired with labels."""

    judges: Mapping[str, str]
    aligned: Aligned


def _judge_rows(runs: Mapping[str, Measured], stage: str) -> dict[str, dict[tuple, Judgement]]:
    """Per model judging `stage` in some run: its judgements by item, from the run that pairs
    the most of them with a p_yes (the first such run in order on a tie)."""
    best: dict[str, tuple[int, dict[tuple, Judgement]]] = {}
    for m in runs.values():
        model = m.judges.get(stage)
        if not model:
            continue
        rows = m.aligned.confidence[stage]
        rated = sum(1 for j in rows if j.p_yes is not None)
        if model not in best or rated > best[model][0]:
            best[model] = (rated, {j.key: j for j in rows})
    return {model: rows for model, (_, rows) in best.items()}


def _balanced(rows, ids: Collection[str] | None) -> float:
    """Balanced accuracy of judgements about the responses `ids` (None: all); -1 when none."""
    pairs = [(j.truth, j.verdict) for j in rows if ids is None or j.key[0] in ids]
    value = binary(pairs)["balanced_accuracy"]
    return -1.0 if value is None else value


def _orders(first: str, others: Sequence[str]) -> list[tuple[str, ...]]:
    out = []
    for size in range(1, CASCADE_LENGTH):
        for rest in itertools.permutations(others, size):
            out.append((first, *rest))
            if len(out) == MAX_CASCADES:
                return out
    return out


def cascade_certificates(
    runs: Mapping[str, Measured],
    first: Mapping[str, str | None],
    *,
    ids: Collection[str] | None = None,
    rank_ids: Collection[str] | None = None,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
    seed: int = 0,
) -> list[dict]:
    """Certificates of the cascades `murgat score --escalate-to` can ask, per certified stage:
    `first[stage]` (the chosen judge; None: no cascade for the stage) then each order of the
    other judges measured on that stage, up to `CASCADE_LENGTH` judges and `MAX_CASCADES`
    orders (the others ranked by balanced accuracy on `rank_ids`). Each is certified by
    `metrics.guarantees.certify_cascade` on the labelled items every judge of the cascade
    judged (aligned by item across runs) among the responses `ids` (None: all); an item a judge
    gave no p_yes for has no confidence there (never kept by it, as `murgat score` would not).
    Each entry: {stage, judges, target, alpha, min_kept, seed, n, steps: [{judge, threshold
    (None: keeps nothing), coverage, n, kept, note}]}: `[[escalation.cascades]]`."""
    out: list[dict] = []
    for stage in CERTIFIED:
        head = first.get(stage)
        judged = _judge_rows(runs, stage)
        if head is None or head not in judged:
            continue
        rank = {m: _balanced(rows.values(), rank_ids) for m, rows in judged.items()}
        others = sorted((m for m in judged if m != head), key=lambda m: (-rank[m], m))
        for order in _orders(head, others):
            keys = set.intersection(*(set(judged[m]) for m in order))
            items = sorted(k for k in keys if ids is None or k[0] in ids)
            judges = [
                (
                    [decoded_confidence(judged[m][k]) for k in items],
                    [judged[m][k].verdict for k in items],
                )
                for m in order
            ]
            human = [judged[head][k].truth for k in items]
            if items:
                certs = certify_cascade(
                    judges, human, target=target, alpha=alpha, seed=seed, min_kept=min_kept
                )
                steps = [
                    {
                        "judge": m,
                        "threshold": c.threshold,
                        "coverage": c.coverage,
                        "n": c.n,
                        "kept": c.kept,
                        "note": c.note,
                    }
                    for m, c in zip(order, certs)
                ]
            else:
                steps = [
                    {"judge": m, "threshold": None, "coverage": 0.0, "n": 0, "kept": 0}
                    for m in order
                ]
                steps[0]["note"] = "no labelled item judged by every judge of the cascade"
            out.append(
                {
                    "stage": str(stage),
                    "judges": list(order),
                    "target": target,
                    "alpha": alpha,
                    "min_kept": min_kept,
                    "seed": seed,
                    "n": len(items),
                    "steps": steps,
                }
            )
    return out


def _block(c: Mapping) -> dict:
    out = {k: c[k] for k in ("threshold", "target", "alpha", "coverage", "n")}
    if c.get("judge"):
        out["judge"] = c["judge"]
    return out


def judge_thresholds(results: Mapping[str, Mapping]) -> dict[str, dict[str, dict]]:
    """Per judge and certified stage, the certification of the run it judged that stage in
    (`results`: meta-eval's per-run blocks, each naming its `judges`); of several such runs, the
    one certified on the most verdicts. Each judge alone, on every labelled response (nothing
    chosen); a cascade reads `cascade_certificates`, not these."""
    out: dict[str, dict[str, dict]] = {}
    for r in results.values():
        for stage, c in (r.get("certification") or {}).items():
            model = (r.get("judges") or {}).get(stage)
            if not model:
                continue
            have = out.setdefault(model, {}).get(stage)
            if have is None or c["n"] > have["n"]:
                out[model][stage] = _block(c)
    return out


def _cascade_entry(c: Mapping) -> dict:
    keep = ("threshold", "coverage", "n")
    return {
        "stage": c["stage"],
        "judges": list(c["judges"]),
        "target": c["target"],
        "alpha": c["alpha"],
        "n": c["n"],
        "steps": [{"judge": s["judge"], **{k: s[k] for k in keep}} for s in c["steps"]],
    }


def escalation_section(
    certification: Mapping[str, Mapping],
    labels: str | None = None,
    judges: Mapping[str, Mapping] | None = None,
    *,
    cascades: Sequence[Mapping] = (),
    split: Split | None = None,
    min_kept: int | None = None,
) -> dict:
    """best.toml's `[escalation]` table from a certification (per stage): what `murgat score
    --escalate-to` reads. A stage with no certified threshold has no `threshold` key: every one
    of its verdicts is escalated. `judges` (`judge_thresholds`) adds every other measured
    judge's own thresholds; `cascades` (`cascade_certificates`) the cascades certified on what
    reaches each judge, `[[escalation.cascades]]`; `split` how the labelled responses were
    divided between choosing and certifying. Validated as `panel_config.EscalationConfig`."""
    from ..panel_config import EscalationConfig

    out: dict = {"labels": labels} if labels else {}
    if min_kept is not None:
        out["min_kept"] = min_kept
    if split is not None:
        out["split"] = split.as_dict(ids=False)
    for stage, c in certification.items():
        out[stage] = _block(c)
    if judges:
        out["judges"] = {m: dict(stages) for m, stages in judges.items()}
    if cascades:
        out["cascades"] = [_cascade_entry(c) for c in cascades]
    EscalationConfig.model_validate(out)
    return out


__all__ = [
    "Measured",
    "cascade_certificates",
    "escalation_section",
    "judge_thresholds",
]
