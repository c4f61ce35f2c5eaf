"""Judges: the MURGAT judge prompts and verdict types, on top of the shared engine layer."""

from __future__ import annotations

from ..engines import (
    AudioPart,
    Engine,
    EngineStats,
    ImagePart,
    JudgeRequest,
    JudgeResult,
    LazyEngine,
    MediaPart,
    ModelNotFound,
    ParseFailure,
    Preset,
    Verdict,
    VideoPart,
    available_presets,
    engine_identity,
    load_preset,
    make_engine,
    neutralize,
)
from .prompts import PromptTemplate, load_prompt
from .verdicts import AtomicFacts, ReasonedYesNo, Rewrite, RewrittenText, YesNo

__all__ = [
    "AtomicFacts",
    "AudioPart",
    "Engine",
    "EngineStats",
    "ImagePart",
    "JudgeRequest",
    "JudgeResult",
    "LazyEngine",
    "MediaPart",
    "ModelNotFound",
    "ParseFailure",
    "Preset",
    "PromptTemplate",
    "ReasonedYesNo",
    "Rewrite",
    "RewrittenText",
    "Verdict",
    "VideoPart",
    "YesNo",
    "available_presets",
    "engine_identity",
    "load_preset",
    "load_prompt",
    "make_engine",
    "neutralize",
]
