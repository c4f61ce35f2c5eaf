"""`murgat meta-eval`'s settings, typed: the intervals, certification and the split that keeps
choosing a judge apart from certifying it. Each field's bounds and description are what the
command's flags are built from (`cli/options.py`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .metrics.certify import ALPHA, MIN_KEPT

# The share of the labelled responses that chooses the judge; the others certify it.
SELECT_FRACTION = 0.5


class MetaEvalOptions(BaseModel):
    """How `murgat meta-eval` measures, certifies and chooses."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resamples: int = Field(10_000, ge=0, description="bootstrap resamples of the intervals")
    seed: int = Field(0, ge=0, description="the seed of the bootstrap")
    certify: float | None = Field(
        None, gt=0, lt=1, description="the agreement with people to certify per yes/no stage"
    )
    alpha: float = Field(ALPHA, gt=0, lt=1, description="the risk the certificate may miss")
    min_kept: int = Field(
        MIN_KEPT, ge=1, description="verdicts the strictest threshold tested keeps, at least"
    )
    split_seed: int = Field(0, ge=0, description="the seed of the choose / certify split")
    select_fraction: float = Field(
        SELECT_FRACTION, gt=0, lt=1, description="the share of the labelled responses that chooses"
    )
