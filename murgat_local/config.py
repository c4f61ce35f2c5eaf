"""Run configuration: one typed object, validated once at the edge (CLI flags over a TOML file).

Nothing deeper reads the environment; the CLI does, once, here. The scoring run's settings and
loading a run file, with flags on top; what every run shares: shared_config.py; panels and
escalation: panel_config.py; `murgat generate`'s settings: generate_config.py.
"""

from __future__ import annotations

import pathlib
import tomllib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .config_errors import ConfigError, problems
from .engine_config import ServerConfig, StageEngine, _engine_options
from .generate_config import GenerateConfig
from .panel_config import EscalationConfig, PanelConfig
from .shared_config import _Run
from .stages import PROTOCOL, YES_NO, Stage


class SamplingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int = Field(0, ge=0)


class RunConfig(_Run):
    """`murgat score` (and the scoring half of `murgat run`)."""

    judge: str = "qwen3-omni-30b-a3b-instruct"
    verifier: str | None = None
    decomposer: str | None = None
    entailer: str | None = None
    # Attribution routed by modality: facts citing only visual (only audio) segments go to this
    # model; facts citing both stay with the entailer (pipeline/routing.py).
    entailer_visual: str | None = None
    entailer_audio: str | None = None
    compat: Literal["reference"] | None = None
    decontextualize: bool = True
    # `--compat reference` only: the reference's --parse_reasoning (see ProtocolOptions).
    parse_reasoning: bool = False
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    # How `panel:M1,M2,...` judges decide (verifiable and entail only).
    panel: PanelConfig = Field(default_factory=PanelConfig)
    # Resamples of the 95% bootstrap intervals in summary.json (fixed seed); 0: no intervals.
    bootstrap_resamples: int = Field(10_000, ge=0)
    # A stage on another engine than the run's: {"entail": {"engine": "openai", "base_url": ...}}.
    stage_engines: dict[str, StageEngine] = Field(default_factory=dict)
    # summary.json's `by_group`: the same means and intervals per value of each field (a key of
    # the responses' `categories`, or `model`, `benchmark`, `question_type`).
    group_by: list[str] = Field(default_factory=list)
    # Certified confidence thresholds per stage (`murgat meta-eval --certify`); None: none.
    escalation: EscalationConfig | None = None
    # `--escalate-to`: the judges a verdict under its judge's threshold goes to, in order.
    escalate_to: list[str] = Field(default_factory=list)

    @field_validator("group_by")
    @classmethod
    def _group_by(cls, v: list[str]) -> list[str]:
        if any(not f.strip() for f in v):
            raise ValueError("group_by names a field: an empty name groups nothing")
        return list(dict.fromkeys(v))

    @field_validator("stage_engines")
    @classmethod
    def _stages(cls, v: dict) -> dict:
        unknown = sorted(set(v) - set(PROTOCOL))
        if unknown:
            raise ValueError(
                f"unknown stage(s) {unknown} in stage_engines; stages: {', '.join(PROTOCOL)}"
            )
        return v

    @model_validator(mode="after")
    def _stage_engines_complete(self):
        for stage in self.stage_engines:
            self.engine_for(stage)
        return self

    def engine_for(self, stage: str | None) -> tuple[str, dict]:
        spec = self.stage_engines.get(stage) if stage else None
        if spec is None:
            return super().engine_for(None)
        # A stage's own server settings over the run's [server] ones.
        server = ServerConfig(
            **{
                **self.server.model_dump(),
                **spec.model_dump(exclude={"engine"}, exclude_unset=True),
            }
        )
        return _engine_options(spec.engine, server, self.data_parallel, self.ray)

    @field_validator("compat", mode="before")
    @classmethod
    def _compat(cls, v):
        return None if v in (None, "", "none", "default") else v

    @model_validator(mode="after")
    def _frames_follow_the_mode(self):
        self.media._frame_rule = "next" if self.compat == "reference" else "shown"
        return self

    @model_validator(mode="after")
    def _parse_reasoning_needs_compat(self):
        if self.parse_reasoning and self.compat != "reference":
            raise ValueError(
                "parse_reasoning reproduces a reference invocation: use it with compat = 'reference'"
            )
        return self

    @model_validator(mode="after")
    def _panels(self):
        self.panel_rules()  # resolving each panel's rule is its validation
        return self

    def panel_rules(self) -> dict:
        """{stage: (members, judges.panel.Rule)} for each stage a panel judges; ValueError for a
        panel where fact lists or rewrites would have to be voted on, or a rule that does not fit."""
        from .judges.panel import is_panel, members_of, voted_stage

        out = {}
        for stage, model in self.stage_models().items():
            if not is_panel(model):
                continue
            if voted_stage(stage) is None:
                what = (
                    "the decomposer"
                    if stage in (Stage.DECONTEXT, Stage.DECOMPOSE)
                    else f"the {stage} judge"
                )
                raise ValueError(
                    f"{model!r} cannot be {what}: fact lists and rewrites are not voted on; name "
                    "one model as the decomposer (panels judge the yes/no stages: --verifier, "
                    "--entailer)"
                )
            members = members_of(model)
            try:
                out[stage] = (members, self.panel.rule(stage, members))
            except ValueError as e:
                raise ValueError(f"panel for {stage}: {e}") from None
            for m in members:
                self.member_engine(stage, m)
        strays = sorted(
            set(self.panel.engines) - {m for members, _ in out.values() for m in members}
        )
        if strays:
            raise ValueError(
                f"[panel.engines] names {', '.join(map(repr, strays))}, a member of no panel of this run"
            )
        return out

    def member_engine(self, stage: str, member: str) -> tuple[str, dict]:
        """(engine name, options) for a panel member: its own `[panel.engines]` entry over the
        stage's engine, or the stage's engine."""
        spec = self.panel.engines.get(member)
        if spec is None:
            return self.engine_for(stage)
        own = self.stage_engines.get(stage)
        server = ServerConfig(
            **{
                **self.server.model_dump(),
                **(own.model_dump(exclude={"engine"}, exclude_unset=True) if own else {}),
                **spec.model_dump(exclude={"engine"}, exclude_unset=True),
            }
        )
        return _engine_options(spec.engine, server, self.data_parallel, self.ray)

    @model_validator(mode="after")
    def _cascades(self):
        self.cascades()  # resolving each cascade's thresholds is its validation
        return self

    def cascades(self) -> dict:
        """{stage: [judges.cascade.Step, ...]} for each stage `escalate_to` escalates: the stage's
        own judge first, then each `--escalate-to` judge, with the thresholds `[escalation]`
        certified for that cascade (`cascade_notes` says where there are none). ValueError
        naming what does not fit."""
        return self._resolve_cascades()[0]

    def cascade_notes(self) -> dict[str, str]:
        """Per stage, why its cascade runs without certified thresholds for its later judges."""
        return self._resolve_cascades()[1]

    def _resolve_cascades(self) -> tuple[dict, dict[str, str]]:
        """The cascades and their notes. The model judges' thresholds are the certified
        cascade's of the same order (`[[escalation.cascades]]`: each judge certified on what
        the judges before it escalate); human labels are certain and take no part in the order
        looked up. Without such a cascade the stage's own judge keeps its own threshold and the
        later model judges keep nothing: what it escalates goes on to people, or is abstained."""
        from .judges.cascade import Step
        from .judges.human import is_human

        if not self.escalate_to:
            return {}, {}
        if self.escalation is None:
            raise ValueError(
                "escalate_to needs certified thresholds: a config with an [escalation] table "
                "(murgat meta-eval --certify ... --select best.toml)"
            )
        twice = sorted({m for m in self.escalate_to if self.escalate_to.count(m) > 1})
        if twice:
            raise ValueError(f"escalate_to names {', '.join(twice)} twice")
        if self.entail_routes():
            raise ValueError("escalate_to with entailer_visual / entailer_audio is not supported")
        models = self.stage_models()
        out: dict = {}
        notes: dict[str, str] = {}
        for stage in YES_NO:  # a cascade certifies the yes/no stages
            own = self.escalation.stage(stage)
            if own is None:
                continue  # nothing certified for the stage: its judge decides alone
            first = models[stage]
            if own.judge is not None and own.judge != first:
                raise ValueError(
                    f"[escalation.{stage}] was certified for {own.judge!r}, but this run's "
                    f"{stage} judge is {first!r}"
                )
            # A judge is not asked again what it was not sure of: where it judges the stage
            # itself, its escalations have nowhere further to go from it.
            asked = [first] + [m for m in self.escalate_to if m != first]
            order = [m for m in asked if not is_human(m)]
            certified = self.escalation.cascade(stage, order) if len(order) > 1 else None
            thresholds: dict[str, float | None] = {first: own.threshold}
            if certified is not None:
                thresholds = {s.judge: s.threshold for s in certified.steps}
            elif len(order) == 1 and order[0] != first:  # after people: the judge alone
                alone = self.escalation.judges.get(order[0], {}).get(stage)
                thresholds = {order[0]: alone.threshold if alone else None}
            elif len(order) > 1:
                known = [
                    " -> ".join(c.judges) for c in self.escalation.cascades if c.stage == stage
                ]
                listed = "; ".join(known[:5]) + (f"; {len(known) - 5} more" if known[5:] else "")
                notes[stage] = (
                    f"escalation {stage}: no certified cascade {' -> '.join(order)} in "
                    f"[escalation.cascades] (certified: {listed or 'none'}): "
                    f"{', '.join(order[1:])} keep nothing, what {order[0]} escalates goes on "
                    "to people or is abstained"
                )
            out[stage] = [
                Step(m, None, certain=True) if is_human(m) else Step(m, thresholds.get(m))
                for m in asked
            ]
        return out, notes

    @model_validator(mode="after")
    def _routes_are_models(self):
        for route, model in self.entail_routes().items():
            if model.startswith(("panel:", "human:")):
                raise ValueError(f"entailer_{route} names one model, not {model!r}")
        return self

    def entail_routes(self) -> dict[str, str]:
        """{'visual' / 'audio': model} for each modality routed to its own attribution judge."""
        return {
            r: m for r, m in (("visual", self.entailer_visual), ("audio", self.entailer_audio)) if m
        }

    def stage_models(self) -> dict[Stage, str]:
        """The model for each stage; decontextualization uses the decomposer, as the reference does."""
        decomposer = self.decomposer or self.judge
        return {
            Stage.DECONTEXT: decomposer,
            Stage.VERIFIABLE: self.verifier or self.judge,
            Stage.DECOMPOSE: decomposer,
            Stage.ENTAIL: self.entailer or self.judge,
        }


# Settings a `[generate]` table inherits from the top level of a run file.
SHARED_KEYS = (
    "engine",
    "server",
    "data_parallel",
    "ray",
    "chunk_size",
    "batch_size",
    "cache",
    "models_dir",
    "limit",
    "media",
    "inputs",
    "engine_args",
    "allow_outside",
    "number_tolerance",
)


def _read(path: pathlib.Path | None) -> dict:
    return tomllib.loads(pathlib.Path(path).read_text()) if path is not None else {}


def _apply(data: dict, overrides: dict) -> dict:
    for key, value in overrides.items():
        if isinstance(value, dict) and key in (
            "server",
            "sampling",
        ):  # a table: flags override its keys
            given = {k: v for k, v in value.items() if v is not None}
            if given:
                data[key] = {**(data.get(key) or {}), **given}
        elif value is not None:
            data[key] = value
    return data


def load_config(path: pathlib.Path | None, overrides: dict) -> RunConfig:
    """The TOML file's scoring settings, with every override that is not None on top.
    ConfigError names each refused key, its flag or its file, the allowed range and the value."""
    data = _read(path)
    data.pop("generate", None)
    try:
        return RunConfig.model_validate(_apply(data, overrides))
    except ValidationError as e:
        raise ConfigError(problems(e, RunConfig, overrides, path)) from None


def load_generate_config(path: pathlib.Path | None, overrides: dict) -> GenerateConfig:
    """The TOML file's `[generate]` table (plus the shared top-level settings), overrides on top."""
    top = _read(path)
    data = {k: top[k] for k in SHARED_KEYS if k in top}
    table = top.get("generate") or {}
    data.update(table)
    try:
        return GenerateConfig.model_validate(_apply(data, overrides))
    except ValidationError as e:
        found = problems(e, GenerateConfig, overrides, path, ("generate", frozenset(table)))
        raise ConfigError(found) from None
