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
- `certification`: `metrics.guarantees.certify` (Trust or Escalate) for the stages a threshold
  can be applied to (`CERTIFIED`: the stages `murgat score` runs), on the decoded verdicts: the
  confidence is the probability of the label the judge gave (`judges.cascade.confidence`, the
  keep rule of `murgat score --escalate-to`), agreement is that label against the person's;
- choosing, then certifying: whatever chooses a judge by its agreement with people (the best
  run, `--select`) chooses on one part of the labelled responses and certifies on the other
  (`split_responses`, `metrics.guarantees.split_items`);
- cascades: `meta.escalation` (best.toml's `[escalation]`);
- `ppi`: `metrics.guarantees.ppi_mean` for MURGAT-S, coverage and F1 over a run's responses,
  people's scores on the labelled ones, only when the labels were drawn at random
  (`views.label_sampling`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..judges.cascade import confidence
from ..meta_config import SELECT_FRACTION
from ..metrics.calibration import calibration
from ..metrics.certify import ALPHA, MIN_KEPT, TARGET
from ..metrics.guarantees import certify, ppi_mean, select_then_certify, split_items
from ..metrics.ppi import corrected_mean
from ..results import ScoreRecord
from ..results.meta_blocks import Sampling
from ..stages import YES_NO, Stage
from .agreement import Aligned, Judgement
from .views import ResponseView

# The yes/no judgements calibrated: the yes/no stages, and the citations' necessity.
STAGES = (*YES_NO, Stage.PRECISE)
CERTIFIED = YES_NO
PPI_METRICS = ("murgat_s", "coverage", "f1")
PPI_ASSUMES = (
    "the labelled responses are a uniform random sample of the run's responses; "
    "otherwise no estimate here is unbiased"
)
# The subtask a certified stage's judges are ranked by (`meta_eval.RANK_BY`: balanced accuracy).
SUBTASK = {Stage.VERIFIABLE: "subtask1", Stage.ENTAIL: "subtask3"}


def _pairs(aligned: Aligned, stage: str) -> tuple[list, list, int]:
    """(p_yes, label) of the stage's paired judgements that carry a p_yes, and how many do not."""
    rows = aligned.confidence[stage]
    kept = [(j.p_yes, j.truth) for j in rows if j.p_yes is not None]
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


def _rows(aligned: Aligned, stage: str, ids: Collection[str] | None) -> list[Judgement]:
    """The stage's paired judgements about the responses `ids` (None: all of them)."""
    rows = aligned.confidence[stage]
    return rows if ids is None else [j for j in rows if j.key[0] in ids]


def decoded_confidence(j: Judgement) -> float | None:
    """The probability of the label the judge decoded (None without a p_yes)."""
    return confidence(j.verdict, j.p_yes)


def stage_certification(
    aligned: Aligned,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
    ids: Collection[str] | None = None,
) -> dict:
    """Per certified stage: `metrics.guarantees.certify`'s block (threshold, target, alpha,
    coverage, n, min_kept, ...) plus `missing_p_yes`, over the judgements about the responses
    `ids` (None: all). A judgement without a p_yes has no confidence: it is left out here, and a
    judge that escalates by confidence would escalate it."""
    out = {}
    for stage in CERTIFIED:
        rows = _rows(aligned, stage, ids)
        rated = [j for j in rows if j.p_yes is not None]
        block = certify(
            [decoded_confidence(j) for j in rated],
            [j.verdict == j.truth for j in rated],
            target=target,
            alpha=alpha,
            min_kept=min_kept,
        ).as_dict()
        block["missing_p_yes"] = len(rows) - len(rated)
        note = _missing_note(block["missing_p_yes"], len(rows))
        if note:
            block["note"] = f"{block['note']}; {note}" if block["note"] else note
        out[stage] = block
    return out


@dataclass(frozen=True)
class Split:
    """The labelled responses divided at random: a choice is made on `selection`, its
    certificate on `certification`, which the choice never saw."""

    seed: int
    fraction: float
    selection: frozenset[str]
    certification: frozenset[str]

    def as_dict(self, *, ids: bool = True) -> dict:
        out: dict = {
            "seed": self.seed,
            "fraction": self.fraction,
            "selection": len(self.selection),
            "certification": len(self.certification),
        }
        if ids:
            out["selection_ids"] = sorted(self.selection)
            out["certification_ids"] = sorted(self.certification)
        return out

    def says(self) -> str:
        return (
            f"chosen on {len(self.selection)} labelled responses, certified on "
            f"{len(self.certification)} others (--split-seed {self.seed}, --select-fraction "
            f"{self.fraction:g})"
        )


def split_responses(ids: Collection[str], *, seed: int = 0, fraction: float = SELECT_FRACTION):
    """`ids` (the labelled responses) split by `metrics.guarantees.split_items`."""
    ordered = sorted(ids)
    select, rest = split_items(ordered, seed=seed, fraction=fraction)
    return Split(
        seed,
        fraction,
        frozenset(ordered[i] for i in select),
        frozenset(ordered[i] for i in rest),
    )


def _restricted(truth: Mapping[str, ResponseView], ids: Collection[str]) -> dict:
    return {rid: v for rid, v in truth.items() if rid in ids}


def corrected_means(
    judge: Mapping[str, ResponseView],
    truth: Mapping[str, ResponseView],
    *,
    sampling: Mapping | None = None,
    confidence_level: float = 0.95,
) -> dict:
    """Per metric (MURGAT-S, coverage, F1): the judge-only mean over every response the run
    scored, the human-only mean over those people labelled, and the PPI++ estimate
    (`metrics.guarantees.ppi_mean`, a t interval), only when `sampling` (`views.label_sampling`)
    says the labels were drawn in a random order; otherwise `ppi` carries a note saying why."""
    ids = sorted(judge)
    drawn = Sampling.model_validate(dict(sampling or {}))
    out: dict = {
        "responses": len(ids),
        "labelled": sum(1 for rid in ids if rid in truth),
        "assumes": PPI_ASSUMES,
        "sampling": dict(sampling) if sampling else None,
    }
    refused = None
    if not drawn.random:
        refused = (
            "no PPI estimate: "
            + (drawn.note or "the labels record no random order")
            + "; PPI needs labels on responses drawn at random (`murgat annotate` asks in a "
            "seeded random order and records it)"
        )
    for metric in PPI_METRICS:
        f = [judge[rid].scores.get(metric) for rid in ids]
        h = [truth[rid].scores.get(metric) if rid in truth else None for rid in ids]
        block = corrected_mean(f, h, confidence_level=confidence_level)
        block["ppi"] = _ppi(f, h, confidence_level, refused)
        out[metric] = block
    return out


def _ppi(f: Sequence, h: Sequence, level: float, refused: str | None) -> dict:
    """The `ppi` entry of one metric: responses without a judge score left out (as for the
    judge-only and human-only means)."""
    pairs = [(a, b) for a, b in zip(f, h) if a is not None]
    y = [b for a, b in pairs if b is not None]
    f_l = [a for a, b in pairs if b is not None]
    f_u = [a for a, b in pairs if b is None]
    out: dict = {"n": len(y), "n_unlabelled": len(f_u), "mean": None, "ci": None, "note": None}
    if refused:
        out["note"] = refused
    elif len(y) < 2:
        out["note"] = f"{len(y)} labelled response(s) with a judge score: an interval needs 2"
    else:
        est, low, high = ppi_mean(y, f_l, f_u, level=level)
        out.update(mean=est, ci=[low, high], interval="t")
        if not f_u:
            out["note"] = "every scored response is labelled: the human-only mean"
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
    min_kept: int = MIN_KEPT,
    sampling: Mapping | None = None,
) -> dict:
    """A run's `calibration` and `ppi` blocks, and its `certification` when a target is given
    (on every labelled response: nothing is chosen for one run's own block)."""
    out = {
        "calibration": stage_calibration(aligned, resamples=resamples, seed=seed),
        "ppi": corrected_means(judge, truth, sampling=sampling),
    }
    if certify_target is not None:
        out["certification"] = stage_certification(
            aligned, target=certify_target, alpha=alpha, min_kept=min_kept
        )
    return out


def certify_best(
    aligned: Mapping[str, Aligned],
    split: Split | None,
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
) -> dict:
    """Per certified stage, the run chosen and certified by `metrics.guarantees.
    select_then_certify`: ranked by balanced accuracy on the judgements about the split's
    selection part, certified on those about its certification part, with `run` naming it and
    `chosen_on` the split; `split` None (one run: nothing is chosen): certified on every
    labelled response. `aligned`: each run's judgements paired with the labels."""
    if split is None:  # meta-eval splits whenever there are runs to choose between
        ((run, a),) = aligned.items()
        blocks = stage_certification(a, target=target, alpha=alpha, min_kept=min_kept)
        return {stage: {**b, "run": run, "chosen_on": None} for stage, b in blocks.items()}
    return {
        stage: block
        for stage in CERTIFIED
        if (block := _select_and_certify(aligned, stage, split, target, alpha, min_kept))
    }


def _select_and_certify(
    aligned: Mapping[str, Aligned],
    stage: str,
    split: Split,
    target: float,
    alpha: float,
    min_kept: int,
) -> dict | None:
    """One stage of `certify_best`: every run's judgements over the items any run judged (the
    items are the same in every run: `Judgement.key`), split by response."""
    mine = {run: {j.key: j for j in a.confidence[stage]} for run, a in aligned.items()}
    keys = sorted({k for judged in mine.values() for k in judged}, key=repr)
    if not keys:
        return None
    truth = {k: j.truth for judged in mine.values() for k, j in judged.items()}
    candidates = {
        run: (
            [decoded_confidence(judged[k]) if k in judged else None for k in keys],
            [judged[k].verdict if k in judged else None for k in keys],
        )
        for run, judged in mine.items()
    }
    parts = (
        [i for i, k in enumerate(keys) if k[0] in split.selection],
        [i for i, k in enumerate(keys) if k[0] in split.certification],
    )
    run, cert = select_then_certify(
        candidates,
        [truth[k] for k in keys],
        target=target,
        alpha=alpha,
        seed=split.seed,
        fraction=split.fraction,
        min_kept=min_kept,
        parts=parts,
    )
    rest = {keys[i] for i in parts[1]}
    unrated = sum(1 for k, j in mine[run].items() if k in rest and j.p_yes is None)
    return {**cert.as_dict(), "missing_p_yes": unrated, "run": run, "chosen_on": _chosen_on(split)}


def _chosen_on(split: Split | None) -> dict | None:
    return None if split is None else split.as_dict(ids=False)


def certify_combination(
    records: Mapping[str, Mapping[str, ScoreRecord]],
    chosen: Mapping,
    truth: Mapping[str, ResponseView],
    *,
    target: float = TARGET,
    alpha: float = ALPHA,
    min_kept: int = MIN_KEPT,
    split: Split | None = None,
) -> dict:
    """Per certified stage, the certification of the combination `--select` chose (`chosen`:
    stage -> `combine.Judge`), on its verdicts as combined from the runs' records (`records`:
    run -> id -> record), with `judge` naming the stage's judge; on the split's certification
    part when the choice was made on its selection part (None: every labelled response)."""
    from .agreement import align
    from .combine import combine_all
    from .views import from_record

    combined, _ = combine_all(
        records, chosen[Stage.VERIFIABLE], chosen[Stage.DECOMPOSE].home, chosen[Stage.ENTAIL]
    )
    views = {rid: v for rid, rec in combined.items() if (v := from_record(rec)) is not None}
    if split is not None:
        truth = _restricted(truth, split.certification)
    block = stage_certification(align(views, truth), target=target, alpha=alpha, min_kept=min_kept)
    return {
        stage: {**c, "judge": chosen[stage].model, "chosen_on": _chosen_on(split)}
        for stage, c in block.items()
    }


__all__ = [
    "CERTIFIED",
    "PPI_METRICS",
    "STAGES",
    "Split",
    "certify_best",
    "certify_combination",
    "corrected_means",
    "decoded_confidence",
    "judged_by_people",
    "split_responses",
    "stage_calibration",
    "stage_certification",
]
