"""How judges are combined and escalated, as a run file states it: `[panel]` (how a panel votes,
its weights and engines, per stage) and `[escalation]` (the certified thresholds of
`murgat meta-eval --certify`).
"""

from __future__ import annotations

import pathlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .engine_config import StageEngine
from .stages import YES_NO, Stage


class PanelVote(BaseModel):
    """How a judge panel (`panel:M1,M2,...`) decides: `[panel]`, or `[panel.STAGE]` for one stage."""

    model_config = ConfigDict(extra="forbid")
    vote: Literal["majority", "unanimous", "any", "weighted"] = "majority"
    weights: dict[str, float] | None = None  # member -> weight, for vote = "weighted"
    # Or the weights measured by `murgat meta-eval` (its meta_eval.json): each member's
    # balanced accuracy on the stage's subtask, as log-odds (judges.panel.reliability_weight).
    weights_from: pathlib.Path | None = None

    @model_validator(mode="after")
    def _one_source(self):
        if self.weights is not None and self.weights_from is not None:
            raise ValueError("panel: give weights or weights_from, not both")
        return self


class PanelConfig(PanelVote):
    verifiable: PanelVote | None = None
    entail: PanelVote | None = None
    # A member on its own engine (e.g. its own `vllm serve` on its own GPU): member -> the
    # `[stage_engines.STAGE]` fields, over the stage's engine settings.
    engines: dict[str, StageEngine] = Field(default_factory=dict)

    def table(self, stage: Stage | None) -> PanelVote | None:
        """`[panel.STAGE]`, the table of a yes/no stage (None: none given, or no such stage)."""
        if stage is None:
            return None
        return {Stage.VERIFIABLE: self.verifiable, Stage.ENTAIL: self.entail}.get(stage)

    def rule(self, stage: str, members: tuple[str, ...]):
        """The resolved `judges.panel.Rule` for a panel of `members` judging `stage`: the stage's
        table over the general one; weights read from `weights_from` when it is given."""
        from .judges.panel import Rule, voted_stage, weights_from_meta
        from .results import ReadError, read_meta_eval

        own = self.table(voted_stage(stage))
        merged = {
            **self.model_dump(include={"vote", "weights", "weights_from"}, exclude_unset=True),
            **(own.model_dump(exclude_unset=True) if own is not None else {}),
        }
        if (
            "weights" in merged and "weights_from" in merged
        ):  # the stage's source replaces the table's
            merged.pop(
                "weights_from"
                if own is not None and "weights" in own.model_fields_set
                else "weights"
            )
        vote = merged.get("vote", "majority")
        source, weights = merged.get("weights_from"), merged.get("weights")
        if vote == "weighted" and source is not None:
            report = read_meta_eval(pathlib.Path(source))
            if isinstance(report, ReadError):
                raise ValueError(f"panel weights_from {report}")
            weights = weights_from_meta(report, stage, members)
        if vote == "weighted" and weights is None:
            raise ValueError(
                f"a weighted panel for {stage} needs weights (member -> weight) or weights_from "
                "(a meta_eval.json)"
            )
        rule = Rule(
            vote,
            tuple((m, float(w)) for m, w in (weights or {}).items()) if vote == "weighted" else (),
            str(source) if vote == "weighted" and source is not None else None,
        )
        rule.check(members)
        return rule


class EscalationStage(BaseModel):
    """One stage's certified threshold, as `murgat meta-eval --certify` measured it: a verdict
    whose confidence (the probability of the label it decoded) is at least `threshold` is kept,
    the others go to people; with probability >= 1 - alpha the kept verdicts agree with people
    at least `target` of the time. No threshold: nothing was certified, every verdict of the
    stage is escalated."""

    model_config = ConfigDict(extra="forbid")
    threshold: float | None = Field(None, ge=0.5, le=1)
    target: float = Field(gt=0, lt=1)
    alpha: float = Field(gt=0, lt=1)
    coverage: float = Field(ge=0, le=1)  # share of the calibration verdicts kept at threshold
    n: int = Field(ge=0)  # calibration pairs (judgements with a p_yes and a person's label)
    judge: str | None = None  # the judge it was certified for (a run's stage judge must be it)


class EscalationSplit(BaseModel):
    """How the labelled responses were divided: the judges chosen on `selection` of them (drawn
    with `seed`, `fraction` of all), certified on the `certification` others."""

    model_config = ConfigDict(extra="forbid")
    seed: int
    fraction: float = Field(gt=0, lt=1)
    selection: int = Field(ge=0)
    certification: int = Field(ge=0)


class CascadeStep(BaseModel):
    """One judge of a certified cascade: its threshold there (None: it keeps nothing, all it
    sees goes on), certified on the `n` labelled verdicts that reached it, `coverage` of which
    it keeps."""

    model_config = ConfigDict(extra="forbid")
    judge: str
    threshold: float | None = Field(None, ge=0.5, le=1)
    coverage: float = Field(ge=0, le=1)
    n: int = Field(ge=0)


class EscalationCascade(BaseModel):
    """`[[escalation.cascades]]`: a cascade of judges for one stage, each certified on what the
    judges before it escalate (`metrics.guarantees.certify_cascade`); `n` labelled verdicts
    that every judge of it gave. What `murgat score --escalate-to` reads for this order."""

    model_config = ConfigDict(extra="forbid")
    stage: Literal["verifiable", "entail"]
    judges: list[str] = Field(min_length=2)
    target: float = Field(gt=0, lt=1)
    alpha: float = Field(gt=0, lt=1)
    n: int = Field(ge=0)
    steps: list[CascadeStep]

    @model_validator(mode="after")
    def _steps_are_the_judges(self):
        if [s.judge for s in self.steps] != self.judges:
            raise ValueError(
                f"escalation.cascades ({self.stage}): the steps' judges "
                f"{[s.judge for s in self.steps]} are not judges {self.judges}"
            )
        if len(set(self.judges)) != len(self.judges):
            raise ValueError(f"escalation.cascades ({self.stage}): a judge twice {self.judges}")
        return self


class EscalationConfig(BaseModel):
    """`[escalation]`: written by `murgat meta-eval --certify ... --select best.toml`. The
    stage tables hold the chosen judges' thresholds; `[escalation.judges."M".STAGE]` those of
    every other judge the meta-eval measured, each alone; `[[escalation.cascades]]` the
    cascades certified on what reaches each judge, which `murgat score --escalate-to` reads."""

    model_config = ConfigDict(extra="forbid")
    labels: str | None = None  # the human labels the thresholds were certified on
    min_kept: int | None = Field(None, ge=1)  # `meta-eval --min-kept`
    split: EscalationSplit | None = None  # None: one run, nothing chosen, every label certified
    verifiable: EscalationStage | None = None
    entail: EscalationStage | None = None
    judges: dict[str, dict[str, EscalationStage]] = Field(default_factory=dict)
    cascades: list[EscalationCascade] = Field(default_factory=list)

    def stage(self, stage: Stage) -> EscalationStage | None:
        """`[escalation.STAGE]`: the chosen judge's threshold for a yes/no stage."""
        return {Stage.VERIFIABLE: self.verifiable, Stage.ENTAIL: self.entail}.get(stage)

    def cascade(self, stage: str, judges: list[str]) -> EscalationCascade | None:
        """The certified cascade of these judges, in this order, for `stage` (None: none)."""
        return next(
            (c for c in self.cascades if c.stage == stage and c.judges == list(judges)), None
        )

    @field_validator("cascades")
    @classmethod
    def _one_per_order(cls, v: list[EscalationCascade]) -> list[EscalationCascade]:
        seen = set()
        for c in v:
            key = (c.stage, tuple(c.judges))
            if key in seen:
                raise ValueError(f"escalation.cascades: {c.stage} {c.judges} twice")
            seen.add(key)
        return v

    @field_validator("judges")
    @classmethod
    def _judge_stages(cls, v: dict) -> dict:
        for model, stages in v.items():
            unknown = sorted(set(stages) - set(YES_NO))
            if unknown:
                raise ValueError(
                    f"escalation.judges.{model!r}: unknown stage(s) {unknown}; "
                    f"stages: {', '.join(YES_NO)}"
                )
        return v
