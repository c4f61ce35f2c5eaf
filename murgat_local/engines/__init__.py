"""Engines: model runtimes behind one interface, a lazy registry, presets and identities.

An engine takes a batch of `Request`s (constrained verdicts, choices or free text, with or
without media) and returns one `Result` per request, in order, never raising for one request's
problem. Engines are registered by name as lazy "module:Class" strings, so nothing heavy is
imported until an engine is started; optional packages are checked at that moment.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Sequence

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .base import (
    Engine,
    EngineStats,
    JudgeRequest,
    JudgeResult,
    Request,
    Result,
    Sampling,
    neutralize,
)
from .constraints import ParseFailure, Verdict, choice_regex, parse_verdict
from .identity import effective_args, engine_identity, identity_material, vllm_cpu_build
from .placement import Gpus, lay_out, seen
from .presets import ModelNotFound, Preset, available_presets, load_preset
from .render import neutralization_of
from .verify import require_whole

# name -> ("module:Class", the optional package it needs)
_REGISTRY: dict[str, tuple[str, str]] = {}
# Engines that take cited segments as references and cut them where the data lives.
_BY_REFERENCE: set[str] = set()


def register_engine(name: str, target: str, requires: str, *, by_reference: bool = False) -> None:
    """Register an engine class by its import path; a duplicate name is refused. An engine
    `by_reference` receives a call's cited segments as `SegmentRef`s (plain values) instead of
    cut media, unless the preset wants video sent as frames (that is laid out before sending)."""
    if name in _REGISTRY:
        raise ValueError(f"engine {name!r} is already registered")
    _REGISTRY[name] = (target, requires)
    if by_reference:
        _BY_REFERENCE.add(name)


register_engine("vllm", "murgat_local.engines.vllm:VLLMEngine", "vllm")
register_engine(
    "transformers", "murgat_local.engines.transformers:TransformersEngine", "transformers"
)
register_engine("openai", "murgat_local.engines.openai:OpenAIEngine", "httpx")
# `--data-parallel N` with engine vllm: N `vllm serve` replicas, one per GPU (serving/replicas.py).
register_engine("replicas", "murgat_local.serving.replicas:ReplicaEngine", "vllm")
register_engine("ray", "murgat_local.engines.ray:RayEngine", "ray", by_reference=True)


def engine_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def check_engine(kind: str) -> None:
    """Raise ValueError naming the choices (and the closest one) for an unknown engine."""
    if kind not in _REGISTRY:
        close = difflib.get_close_matches(kind, list(_REGISTRY), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown engine {kind!r} (choose from {', '.join(_REGISTRY)}){hint}")


def make_engine(kind: str, preset: Preset, **options) -> Engine:
    """Start an engine of `kind` on `preset` (loads the model)."""
    check_engine(kind)
    target, requires = _REGISTRY[kind]
    if importlib.util.find_spec(requires) is None:
        raise ValueError(f"engine {kind!r} needs the {requires!r} package, which is not installed")
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)(preset, **options)


class LazyEngine:
    """An engine that is only started when a request actually needs a model.

    Its identity is known without loading, so a run served entirely from the cache never
    starts a model. One LazyEngine per model is shared by every stage and pipeline that uses it.
    """

    def __init__(self, kind: str, preset: Preset, *, gpus: Gpus | None = None, **options):
        """`gpus`: the GPUs to lay the preset out for, where not those this machine shows."""
        check_engine(kind)
        # Every command makes its holders before its first engine starts: a half-copied folder
        # is refused here, naming its files, before its weights are hashed for the identity.
        require_whole(preset)
        # The layout for the GPUs this route's vLLM will see, chosen before the identity (its
        # arguments are in it); a box whose GPUs cannot hold the model stops here, before any
        # engine starts, with the `murgat models --fit` line (`placement.DoesNotFit`, a
        # ValueError). vLLM's CPU build sizes its own memory: nothing is chosen there.
        preset = lay_out(preset, gpus if gpus is not None else seen(kind, options), options)
        self.kind = kind
        self.preset = preset
        self.options = options
        args = effective_args(kind, preset, options)
        temperature = options.get("temperature", 0.0)
        fingerprint = options.get("fingerprint")
        # Which special tokens untrusted text is stripped of (recorded in summary.json; the
        # generic fallback is part of the identity).
        self.neutralization = neutralization_of(preset, options.get("tokenizer"))
        mode = self.neutralization["neutralization"]
        self.identity = engine_identity(
            kind, preset, temperature, args, fingerprint=fingerprint, neutralization=mode
        )
        self.identity_detail = identity_material(
            kind, preset, temperature, args, fingerprint=fingerprint, neutralization=mode
        )
        # What the engine will take, known before it starts: vLLM's CPU build cannot run some
        # towers (`Preset.cpu_refuses`), so responders are planned and judges checked without them.
        self.preset = preset.on_runtime(cpu=kind == "vllm" and vllm_cpu_build())
        self.modalities = self.preset.modalities
        self.unavailable = self.preset.unavailable
        self._engine: Engine | None = None
        self.media_by_reference = kind in _BY_REFERENCE and not preset.quirks.video_as_images

    # A model answers from the prompt and its media, the same for every item.
    per_item = False
    needs_media = True

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        return None  # a model judges any response

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


def engine_holder(
    kind: str, preset: Preset, engine_args: dict, transport: dict, **decoding
) -> LazyEngine:
    """The holder of `preset` on engine `kind`: the one way every command sets an engine up.
    `engine_args` (a run's `[engine_args]`, vLLM's own arguments) go to the engines that run
    vLLM (`identity.runtime`) and to no other, which would refuse them; `transport` is where the
    engine is reached (a server's URL, replicas); `decoding` its temperature and seed."""
    from .identity import runtime

    args = engine_args if runtime(kind) == "vllm" else {}
    return LazyEngine(kind, preset, **decoding, **args, **transport)


def close_all(holders) -> None:
    """Close every engine in `holders` (engines, `LazyEngine`s, anything with `close()`; each
    once) at the same time: a vLLM engine's shutdown is mostly waiting for its processes to exit
    (about 5 s each here), so closing N of them one after another waited N times as long. The
    first error, if any, is raised after all of them were closed."""
    from concurrent.futures import ThreadPoolExecutor

    unique = list({id(h): h for h in holders}.values())
    if len(unique) <= 1:
        for h in unique:
            h.close()
        return
    with ThreadPoolExecutor(max_workers=len(unique), thread_name_prefix="close-engine") as pool:
        futures = [pool.submit(h.close) for h in unique]
    errors = [e for f in futures if (e := f.exception()) is not None]
    if errors:
        raise errors[0]


__all__ = [
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
    "Request",
    "Result",
    "Sampling",
    "Verdict",
    "VideoPart",
    "available_presets",
    "check_engine",
    "choice_regex",
    "close_all",
    "effective_args",
    "engine_holder",
    "engine_identity",
    "engine_names",
    "identity_material",
    "load_preset",
    "make_engine",
    "neutralize",
    "parse_verdict",
    "register_engine",
]
