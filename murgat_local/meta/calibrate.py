"""How far a judge's confidence can be trusted, measured against people's labels; and the
means corrected by them. No model call: everything is read from recorded judgements.

Per yes/no stage (the judgements paired with a person's label by `agreement.align`):
  verifiable  subtask 1, one judgement per sentence
  entail      subtask 3, the joint entailment verdict per fact
  precise     per citation of a fact both call entailed, the probability the scoring rule gives
              from its alone / without judgements (`views.precise_p_yes`); a citation the rule
              decides without a judgement (unusable, or the only usable one) is not counted
- `calibration`: `metrics.calibration` of p_yes against the label, and how many paired judgements
  carry no p_yes (left out);
- `certification`: `metrics.certify` (Trust or Escalate) for the stages a threshold can be applied
  to (`CERTIFIED`: the stages `murgat score` runs; the precision judgements are entail calls);
- `ppi`: `metrics.ppi` for MURGAT-S, coverage and F1 over a run's responses, people's scores on
  the labelled ones.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..metrics.calibration import calibration
from ..metrics.certify import ALPHA, TARGET, certify
from ..metrics.ppi import corrected_mean
from ..stages import YES_NO, Stage
from .agreement import Aligned
from .views import ResponseView

# The yes/no judgements calibrated: the yes/no stages, and the citations' necessity.
STAGES = (*YES_NO, Stage.PRECISE)
CERTIFIED = YES_NO
PPI_METRICS = ("murgat_s", "coverage", "f1")
PPI_ASSUMES = (
    "the labelled responses are a uniform random sample of the run's responses; "
    "otherwise no estimate here is unbiased"
)


def _pairs(aligned: Aligned, stage: str) -> tuple[list, list, int]:
    """(p_yes, label) of the stage's paired judgements that carry a p_yes, and how many do not."""
    rows = aligned.confidence[stage]
    kept = [(p, y) for p, y in rows if p is not None]
    return [p for p, _ in kept], [bool(y) for _, y in kept], len(rows) - len(kept)


def _missing_note(missing: int, judged: int) -> str | None:
    if not missing:
        return None
    if missing == judged:
        return (
            f"none of the {judged} paired judgements carries a p_yes (a run scored before p_yes "
            "was recorded, an engine that cannot give it, or a panel's vote): nothing measured"
        )
    return f"{missing} of {judged} paired judgements carry no p_yes: left out"


def stage_calibration(aligned: Aligned, *, resamples: int = 10_000, seed: int = 0) -> dict:
    """Per stage: `metrics.calibration`'s block (n, ece, brier, auroc, intervals, bins, notes),
    plus `judged` (paired judgements) and `missing_p_yes` (those without a p_yes)."""
    out = {}
    for stage in STAGES:
        p, y, missing = _pairs(aligned, stage)
        block = calibration(p, y, n_resamples=resamples, seed=seed)
        block["judged"] = len(aligned.confidence[stage])
        block["missing_p_yes"] = missing
        note = _missing_note(missing, block["judged"])
        if note:
            block["notes"]["p_yes"] = note
        out[stage] = block
    return out


def stage_certification(aligned: Aligned, *, target: float = TARGET, alpha: float = ALPHA) -> dict:
    """Per certified stage: `metrics.certify`'s block (threshold, target, alpha, coverage, n, ...)
    plus `missing_p_yes`. A judgement without a p_yes has no confidence: it is left out here,
    and a judge that escalates by confidence would escalate it."""
    out = {}
    for stage in CERTIFIED:
        p, y, missing = _pairs(aligned, stage)
        block = certify(p, y, target=target, alpha=alpha)
        block["missing_p_yes"] = missing
        note = _missing_note(missing, len(aligned.confidence[stage]))
        if note:
            block["note"] = f"{block['note']}; {note}" if block["note"] else note
        out[stage] = block
    return out


def corrected_means(
    judge: Mapping[str, ResponseView],
    truth: Mapping[str, ResponseView],
    *,
    confidence_level: float = 0.95,
) -> dict:
    """Per metric (MURGAT-S, coverage, F1): the judge-only mean over every response the run
    scored, the human-only mean over those people labelled, and the PPI++ estimate."""
    ids = sorted(judge)
    out: dict = {
        "responses": len(ids),
        "labelled": sum(1 for rid in ids if rid in truth),
        "assumes": PPI_ASSUMES,
    }
    for metric in PPI_METRICS:
        f = [judge[rid].scores.get(metric) for rid in ids]
        h = [truth[rid].scores.get(metric) if rid in truth else None for rid in ids]
        out[metric] = corrected_mean(f, h, confidence_level=confidence_level)
    return out


def judged_by_people(
    judge: Mapping[str, ResponseView],
    truth: Mapping[str, ResponseView],
    aligned: Aligned,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    certify_target: float | None = None,
    alpha: float = ALPHA,
) -> dict:
    """A run's `calibration` and `ppi` blocks, and its `certification` when a target is given."""
    out = {
        "calibration": stage_calibration(aligned, resamples=resamples, seed=seed),
        "ppi": corrected_means(judge, truth),
    }
    if certify_target is not None:
        out["certification"] = stage_certification(aligned, target=certify_target, alpha=alpha)
    return out


def certify_best(results: Mapping[str, Mapping], best: Mapping[str, str | None]) -> dict:
    """Per certified stage, the certification of the run ranked best on its subtask (`best`:
    subtask -> run, as meta-eval ranks them), with `run` naming it."""
    subtask = {Stage.VERIFIABLE: "subtask1", Stage.ENTAIL: "subtask3"}
    out = {}
    for stage in CERTIFIED:
        run = best.get(subtask[stage])
        if run is not None and "certification" in results[run]:
            out[stage] = {**results[run]["certification"][stage], "run": run}
    return out


def certify_combination(
    records: Mapping[str, Mapping[str, Mapping]],
    chosen: Mapping,
    truth: Mapping[str, ResponseView],
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
) -> dict:
    """Per certified stage, the certification of the combination `--select` chose (`chosen`:
    stage -> `combine.Judge`), on its verdicts as combined from the runs' records (`records`:
    run -> id -> record), with `judge` naming the stage's judge."""
    from .agreement import align
    from .combine import combine_all
    from .views import from_record

    combined, _ = combine_all(
        records, chosen[Stage.VERIFIABLE], chosen[Stage.DECOMPOSE].home, chosen[Stage.ENTAIL]
    )
    views = {rid: v for rid, rec in combined.items() if (v := from_record(rec)) is not None}
    block = stage_certification(align(views, truth), target=target, alpha=alpha)
    return {stage: {**c, "judge": chosen[stage].model} for stage, c in block.items()}


def _block(c: Mapping) -> dict:
    out = {k: c[k] for k in ("threshold", "target", "alpha", "coverage", "n")}
    if c.get("judge"):
        out["judge"] = c["judge"]
    return out


def judge_thresholds(results: Mapping[str, Mapping]) -> dict[str, dict[str, dict]]:
    """Per judge and certified stage, the certification of the run it judged that stage in
    (`results`: meta-eval's per-run blocks, each naming its `judges`); of several such runs, the
    one certified on the most verdicts. What `murgat score --escalate-to M` reads for M."""
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


def escalation_section(
    certification: Mapping[str, Mapping],
    labels: str | None = None,
    judges: Mapping[str, Mapping] | None = None,
) -> dict:
    """best.toml's `[escalation]` table from a certification (per stage): what `murgat score
    --escalate-to` reads. A stage with no certified threshold has no `threshold` key: every one
    of its verdicts is escalated. `judges` (`judge_thresholds`) adds every other measured
    judge's thresholds, for a cascade. Validated as `panel_config.EscalationConfig`."""
    from ..panel_config import EscalationConfig

    out: dict = {"labels": labels} if labels else {}
    for stage, c in certification.items():
        out[stage] = _block(c)
    if judges:
        out["judges"] = {m: dict(stages) for m, stages in judges.items()}
    EscalationConfig.model_validate(out)
    return out


__all__ = [
    "CERTIFIED",
    "certify_best",
    "certify_combination",
    "judged_by_people",
    "PPI_METRICS",
    "STAGES",
    "corrected_means",
    "escalation_section",
    "judge_thresholds",
    "stage_calibration",
    "stage_certification",
]
