"""One request per accepted modality on each model: proves an engine serves a model end to end."""

from __future__ import annotations

import numpy as np

from ..engines import JudgeRequest, make_engine
from ..engines.identity import vllm_cpu_build
from ..engines.presets import available_presets, load_preset
from ..media.parts import AudioPart, ImagePart, VideoPart
from .verdicts import YesNo

LOCAL_TEST_MODELS = (
    "tiny-qwen3-omni",
    "tiny-gemma3",
    "tiny-gemma4",
    "tiny-qwen3-vl",
    "tiny-qwen2-audio",
    "tiny-qwen2.5-omni",
    "smollm2-135m-instruct",
    "gemma3-270m",
)


def probe_requests(modalities: frozenset[str]) -> list[tuple[str, JudgeRequest]]:
    image = np.zeros((224, 224, 3), dtype=np.uint8)
    image[:] = (200, 30, 30)
    frames = np.repeat(image[None], 4, axis=0)
    t = np.arange(32000) / 16000
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    system = "You check claims against evidence. Answer with YES or NO."
    out = [("text", JudgeRequest("Claim: the sky is blue.", YesNo, system))]
    if "image" in modalities:
        out.append(
            ("image", JudgeRequest("Claim: the image is red.", YesNo, system, (ImagePart(image),)))
        )
    if "video" in modalities:
        out.append(
            (
                "video",
                JudgeRequest("Claim: the clip is red.", YesNo, system, (VideoPart(frames, 2.0),)),
            )
        )
    if "audio" in modalities:
        out.append(
            ("audio", JudgeRequest("Claim: a tone plays.", YesNo, system, (AudioPart(tone),)))
        )
    return out


def smoke_models(models: list[str] | None) -> list[str]:
    """The models named, or every local test model that has a preset."""
    return list(models or [m for m in LOCAL_TEST_MODELS if m in available_presets()])


def run_smoke(models: list[str] | None, engine: str = "vllm", **options) -> list[dict]:
    """One row per probe; a model that cannot start (or fails while judging) is one row naming
    the reason, and the next model is tried. `options` go to the engine (`base_url`)."""
    rows: list[dict] = []
    for name in smoke_models(models):
        preset = load_preset(name)
        # A modality the preset takes but this engine cannot run (vLLM's CPU build, for some
        # towers) is not probed: its row says why.
        runtime = preset.on_runtime(cpu=engine == "vllm" and vllm_cpu_build())
        probes = probe_requests(runtime.modalities)
        rows.extend(
            _row(name, engine, m, raw=f"not run on this engine: {why}", skipped=True)
            for m, why in sorted(runtime.unavailable.items())
        )
        eng = None
        try:
            eng = make_engine(engine, preset, **options)
            results = eng.judge([r for _, r in probes])
        except Exception as e:
            where = "(start)" if eng is None else "(all)"
            rows.append(_row(name, engine, where, raw=f"{type(e).__name__}: {e}"))
            continue
        finally:
            if eng is not None:
                eng.close()
        for (modality, _), res in zip(probes, results):
            rows.append(
                _row(
                    name,
                    engine,
                    modality,
                    verdict=res.verdict.label if isinstance(res.verdict, YesNo) else None,
                    raw=res.raw or (res.error or ""),
                    prompt_tokens=res.prompt_tokens,
                    output_tokens=res.output_tokens,
                    bos_count=res.bos_count,
                    prompt_digest=res.prompt_digest,
                )
            )
    return rows


def _row(model: str, engine: str, modality: str, **fields) -> dict:
    """One probe's row (`murgat smoke --json` prints these): a probe not run has no verdict,
    no prompt and no digest. `prompt_digest` is the sha256 of the prompt token ids the engine
    ran, the same on every route for the same request (`engines.reach.prompt_print`)."""
    row = {
        "model": model,
        "engine": engine,
        "modality": modality,
        "verdict": None,
        "raw": "",
        "prompt_tokens": 0,
        "output_tokens": 0,
        "bos_count": None,
        "prompt_digest": None,
    }
    row.update(fields)
    return row
