"""What every run is configured with, scoring or generating (`config.RunConfig`,
`generate_config.GenerateConfig`): engine and server, chunks and batches, cache, media, input
limits.
"""

from __future__ import annotations

import pathlib

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .engine_config import RayConfig, ServerConfig, _engine_options
from .inputs.limits import InputLimits
from .media.segments import SegmentOptions


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
