"""Judges: engines behind one interface, model presets, prompt templates and verdict types."""

from __future__ import annotations

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .engine import (
    Engine,
    EngineStats,
    JudgeRequest,
    JudgeResult,
    neutralize,
)
from .identity import effective_args, engine_identity, identity_material
from .presets import ModelNotFound, Preset, available_presets, load_preset
from .prompts import PromptTemplate, load_prompt
from .verdicts import AtomicFacts, ParseFailure, ReasonedYesNo, Rewrite, RewrittenText, Verdict, YesNo

ENGINES = ("vllm", "transformers")


def make_engine(kind: str, preset: Preset, **options) -> Engine:
    """Start an engine of `kind` on `preset` (loads the model)."""
    if kind == "vllm":
        from .vllm_engine import VLLMEngine

        return VLLMEngine(preset, **options)
    if kind == "transformers":
        from .hf_engine import TransformersEngine

        return TransformersEngine(preset, **options)
    raise ValueError(f"unknown engine {kind!r} (choose from {', '.join(ENGINES)})")


class LazyEngine:
    """An engine that is only started when a request actually needs a model.

    Its identity is known without loading, so a run served entirely from the cache never
    starts a model.
    """

    def __init__(self, kind: str, preset: Preset, **options):
        if kind not in ENGINES:
            raise ValueError(f"unknown engine {kind!r} (choose from {', '.join(ENGINES)})")
        self.kind = kind
        self.preset = preset
        self.options = options
        args = effective_args(kind, preset, options)
        temperature = options.get("temperature", 0.0)
        self.identity = engine_identity(kind, preset, temperature, args)
        self.identity_detail = identity_material(kind, preset, temperature, args)
        self._engine: Engine | None = None

    @property
    def started(self) -> bool:
        return self._engine is not None

    def get(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self.kind, self.preset, **self.options)
        return self._engine

    @property
    def stats(self) -> EngineStats:
        return self._engine.stats if self._engine is not None else EngineStats()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None


__all__ = [
    "AtomicFacts", "AudioPart", "ENGINES", "Engine", "EngineStats", "ImagePart", "JudgeRequest",
    "JudgeResult", "LazyEngine", "MediaPart", "ModelNotFound", "ParseFailure", "Preset",
    "PromptTemplate", "ReasonedYesNo", "Rewrite", "RewrittenText", "Verdict", "VideoPart", "YesNo",
    "available_presets", "engine_identity", "load_preset", "load_prompt", "make_engine", "neutralize",
]
