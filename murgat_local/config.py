"""Run configuration: one typed object, validated once at the edge (CLI flags over a TOML file).

Nothing deeper reads the environment; the CLI does, once, here.
"""

from __future__ import annotations

import pathlib
import tomllib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .config_errors import ConfigError, problems
from .engine_config import RayConfig, ServerConfig, StageEngine, _engine_options
from .generate.program.limits import Limits
from .inputs.limits import InputLimits
from .media.segments import SegmentOptions
from .stages import PROTOCOL, YES_NO, Stage


class MediaConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fps: float = Field(2.0, gt=0, le=30)
    max_frames: int = Field(32, ge=2, le=512)
    max_side: int = Field(448, ge=28, le=4096)
    audio_point_window: float = Field(1.0, gt=0, le=30)
    # Seconds allowed past the last moment a citation can name (the duration rounded up).
    duration_tolerance: float = Field(0.0, ge=0, le=10)
    # Audio of a file longer than this many seconds is cut by seeking to each cited window.
    audio_seek_after: float = Field(600.0, ge=0)
    # Memory bounds: how much media is held at once (they never change a number).
    max_open_videos: int = Field(8, ge=1)
    max_audio_mb: float = Field(1024, gt=0)
    max_segment_mb: float = Field(512, gt=0)
    # Which frame stands for a cited time: the run's mode sets it (RunConfig), no [media] key.
    _frame_rule: str = "shown"

    def options(self) -> SegmentOptions:
        return SegmentOptions(
            **self.model_dump(exclude={"max_open_videos", "max_audio_mb", "max_segment_mb"}),
            frame_rule=self._frame_rule,
        )

    def bounds(self) -> dict:
        return {
            "max_open": self.max_open_videos,
            "max_audio_bytes": int(self.max_audio_mb * 2**20),
            "max_bytes": int(self.max_segment_mb * 2**20),
        }


class InputConfig(BaseModel):
    """`[inputs]`: how large one value of an input may be, checked before it is decoded (Arrow's
    lengths, an image's header); a value over a limit is its row's error (or its call's, for an
    image being sent), naming the key."""

    model_config = ConfigDict(extra="forbid")
    # Characters in one text value of a row (a response, a question, an option).
    max_text_chars: int = Field(10_000_000, ge=1)
    # Megabytes in one binary value of a row (an image's encoded file).
    max_binary_mb: float = Field(64, gt=0)
    # Width x height of an image, read from its header before it is decoded.
    max_image_pixels: int = Field(25_000_000, ge=1)

    def limits(self) -> InputLimits:
        return InputLimits(
            self.max_text_chars, int(self.max_binary_mb * 2**20), self.max_image_pixels
        )


class SamplingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int = Field(0, ge=0)


class _Run(BaseModel):
    """What every run (scoring or generating) is configured with."""

    model_config = ConfigDict(extra="forbid")
    engine: str = "vllm"  # a registered engine name (see murgat_local.engines)
    server: ServerConfig = Field(default_factory=ServerConfig)
    # N > 1: N vLLM server replicas (one per GPU) share each batch.
    data_parallel: int = Field(1, ge=1, le=64)
    ray: RayConfig = Field(default_factory=RayConfig)
    # Folders outside --media-root that video paths (or symlinks) may lead into.
    allow_outside: list[pathlib.Path] = Field(default_factory=list)
    chunk_size: int = Field(512, ge=1)
    batch_size: int = Field(256, ge=1)
    cache: pathlib.Path | None = None
    models_dir: pathlib.Path | None = None
    limit: int | None = Field(None, ge=1)
    # A run in which a larger share of its unique model calls got no answer (unparsed,
    # refused, failed) exits 1: a broken model must not pass as a finished run.
    max_failed_calls: float = Field(0.05, ge=0, le=1)
    # Open questions: a numeric answer matches the gold number within this relative tolerance.
    number_tolerance: float = Field(0.01, ge=0, le=1)
    media: MediaConfig = Field(default_factory=MediaConfig)
    inputs: InputConfig = Field(default_factory=InputConfig)
    engine_args: dict = Field(default_factory=dict)

    @field_validator("engine")
    @classmethod
    def _engine(cls, v: str) -> str:
        from .engines import check_engine

        check_engine(v)
        return v

    @model_validator(mode="after")
    def _engines_complete(self):
        self.engine_for(None)
        return self

    def engine_for(self, stage: str | None) -> tuple[str, dict]:
        """(registered engine name, its options) for `stage` (None: the run's default engine)."""
        return _engine_options(self.engine, self.server, self.data_parallel, self.ray)


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
        import json

        from .judges.panel import Rule, voted_stage, weights_from_meta

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
            try:
                report = json.loads(pathlib.Path(source).read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ValueError(f"panel weights_from {source}: {e}") from None
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
    whose confidence max(p_yes, 1 - p_yes) is at least `threshold` is kept, the others go to
    people; with probability >= 1 - alpha the kept verdicts agree with people at least `target`
    of the time. No threshold: nothing was certified, every verdict of the stage is escalated."""

    model_config = ConfigDict(extra="forbid")
    threshold: float | None = Field(None, ge=0.5, le=1)
    target: float = Field(gt=0, lt=1)
    alpha: float = Field(gt=0, lt=1)
    coverage: float = Field(ge=0, le=1)  # share of the calibration verdicts kept at threshold
    n: int = Field(ge=0)  # calibration pairs (judgements with a p_yes and a person's label)
    judge: str | None = None  # the judge it was certified for (a run's stage judge must be it)


class EscalationConfig(BaseModel):
    """`[escalation]`: written by `murgat meta-eval --certify ... --select best.toml`. The
    stage tables hold the chosen judges' thresholds; `[escalation.judges."M".STAGE]` those of
    every other judge the meta-eval measured, which `murgat score --escalate-to M` reads."""

    model_config = ConfigDict(extra="forbid")
    labels: str | None = None  # the human labels the thresholds were certified on
    verifiable: EscalationStage | None = None
    entail: EscalationStage | None = None
    judges: dict[str, dict[str, EscalationStage]] = Field(default_factory=dict)

    def stage(self, stage: Stage) -> EscalationStage | None:
        """`[escalation.STAGE]`: the chosen judge's threshold for a yes/no stage."""
        return {Stage.VERIFIABLE: self.verifiable, Stage.ENTAIL: self.entail}.get(stage)

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
        own judge first, then each `--escalate-to` judge, with the threshold `[escalation]`
        certified for it at that stage. ValueError naming what does not fit."""
        from .judges.cascade import Step
        from .judges.human import is_human

        if not self.escalate_to:
            return {}
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
        out = {}
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
            steps = [Step(first, own.threshold, is_human(first))]
            for m in self.escalate_to:
                if m == first:  # nowhere further for this stage: its escalations are abstained
                    continue
                if is_human(m):
                    steps.append(Step(m, None, certain=True))
                    continue
                table = self.escalation.judges.get(m)
                if table is None:
                    known = ", ".join(map(repr, self.escalation.judges)) or "none"
                    raise ValueError(
                        f"escalate_to {m!r}: [escalation.judges] certifies no threshold for it "
                        f"(certified: {known}); give meta-eval a run judged by it"
                    )
                block = table.get(stage)
                steps.append(Step(m, block.threshold if block else None))
            out[stage] = steps
        return out

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


class GenerationSampling(BaseModel):
    """Decoding for responders (judges decode greedily unless `[sampling]` says otherwise)."""

    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=0)
    max_tokens: int = Field(1024, ge=1)
    seed: int = Field(0, ge=0)
    # Extra tokens a thinking model (preset quirk `thinking`) may spend before its answer.
    thinking_budget: int = Field(0, ge=0)


class GenerateConfig(_Run):
    """`murgat generate` / the generation half of `murgat run` (TOML table `[generate]`)."""

    models: list[str] = Field(default_factory=list, min_length=1)
    strategies: list[str] = Field(default_factory=lambda: ["base"], min_length=1)
    samples: int = Field(1, ge=1, le=64)
    # Maps a free answer to an option when no letter can be read; default: the responder itself.
    answer_judge: str | None = None
    sampling: GenerationSampling = Field(default_factory=GenerationSampling)
    # Program-aided strategies: what one plan may spend (`generate.program.Limits` fields, e.g.
    # max_tool_calls, max_steps, max_seconds); recorded in every trace. Narrative plans get at
    # most 12 lines unless this says otherwise (the prompts ask for 10 at most; a shorter
    # grammar compiles faster).
    program_limits: dict[str, float] = Field(default_factory=dict)
    # A subset drawn the same way every time (recorded in provenance): `sample` questions chosen
    # by `sample_seed`, in proportion to the values of the category `stratify` when given.
    sample: int | None = Field(None, ge=1)
    sample_seed: int = Field(0, ge=0)
    stratify: str | None = None
    # The dataset's format when detection cannot tell (see `murgat dataset --format`).
    dataset_format: str | None = None

    @field_validator("program_limits")
    @classmethod
    def _limits(cls, v: dict[str, float]) -> dict[str, float]:
        known = set(Limits.__dataclass_fields__)
        unknown = sorted(set(v) - known)
        if unknown:
            raise ValueError(f"unknown program limit(s) {unknown}; known: {sorted(known)}")
        _program_limits(v)  # positive values
        return v

    def limits(self) -> Limits:
        return _program_limits({"max_plan_lines": 12, **self.program_limits})


def _program_limits(values: dict[str, float]) -> Limits:
    """`Limits` from a TOML table's numbers, each as its field's type (an int field's 12.0: 12)."""
    return Limits(**{k: type(getattr(Limits(), k))(v) for k, v in values.items()})


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
