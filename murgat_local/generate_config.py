"""`murgat generate`'s configuration (the `[generate]` table of a run file): responders,
strategies, samples, decoding, program limits, the subset drawn.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .generate.program.limits import Limits
from .shared_config import _Run


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

    @model_validator(mode="after")
    def _stratify_draws(self) -> GenerateConfig:
        if self.stratify is not None and self.sample is None:
            raise ValueError("stratify draws a subset: give sample too (--sample N)")
        return self

    def limits(self) -> Limits:
        return _program_limits({"max_plan_lines": 12, **self.program_limits})


def _program_limits(values: dict[str, float]) -> Limits:
    """`Limits` from a TOML table's numbers, each as its field's type (an int field's 12.0: 12)."""
    return Limits(**{k: type(getattr(Limits(), k))(v) for k, v in values.items()})
