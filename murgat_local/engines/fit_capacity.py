"""A model's KV token capacity in a cache of a given size, as vLLM's engine counts it at start
("KV cache size: N tokens"), from the same per-layer specs and vLLM functions `--fit` sizes
with (`fit_needs.kv_plan`): `murgat models --fit NAME --kv-cache-bytes B`."""

from __future__ import annotations

from dataclasses import dataclass

from .fit import GPUS, Gpu, _config_json, _context
from .fit_needs import kv_plan


def sizing_args(preset, device: str, options: dict | None = None) -> dict:
    """The engine arguments vLLM's build for `device` ("cuda" or "cpu") runs `preset` with,
    `options` (a run's `[engine_args]` and flags) over the preset's: on the CPU build, what
    murgat sets there (`identity.effective_args`: the CPU's dtype, block 32, whole-prompt
    prefill)."""
    from .identity import cpu_dtype

    options = dict(options or {})
    if device == "cuda":
        return {**preset.engine_args, **options}
    args = {**preset.engine_args, **options}
    args["dtype"] = options.get("dtype") or preset.cpu_dtype or cpu_dtype()
    args.setdefault("block_size", 32)
    args.setdefault("max_num_batched_tokens", max(int(args.get("max_model_len") or 8192), 8192))
    return args


@dataclass(frozen=True)
class Capacity:
    """How many tokens a KV cache of `kv_cache_bytes` holds for a model, as vLLM's engine counts
    them at start ("KV cache size: N tokens")."""

    name: str
    device: str
    kv_cache_bytes: int
    max_model_len: int
    block_size: int
    kv_bytes_per_token: float
    kv_tokens: int

    def as_json(self) -> dict:
        return dict(self.__dict__)

    def line(self) -> str:
        return (
            f"{self.name} ({self.device}, max_model_len={self.max_model_len}, block "
            f"{self.block_size}): {self.kv_bytes_per_token:.0f} KV bytes a token, "
            f"{self.kv_tokens} tokens in {self.kv_cache_bytes} bytes"
        )


def capacity(
    preset,
    kv_cache_bytes: int,
    device: str = "cuda",
    gpu: Gpu | None = None,
    options: dict | None = None,
) -> Capacity | None:
    """`preset`'s KV token capacity in a cache of `kv_cache_bytes` per GPU under `options` (a
    run's engine arguments, `max_model_len` among them), on vLLM's build for `device`; None
    where nothing says what the model is."""
    config_json = _config_json(preset)
    if config_json is None:
        return None
    args = sizing_args(preset, device, options)
    length = args.get("max_model_len") or _context(preset, config_json)
    block = args.get("block_size") or (16 if device == "cuda" else 128)
    plan = kv_plan(
        config_json,
        dtype=args.get("dtype") or "auto",
        max_model_len=length,
        tensor_parallel_size=args.get("tensor_parallel_size") or 1,
        max_num_batched_tokens=(
            args.get("max_num_batched_tokens") or (gpu or GPUS["h100"]).batched_tokens
        ),
        kv_cache_dtype=args.get("kv_cache_dtype") or "auto",
        device=device,
        block_size=block,
    )
    return Capacity(
        name=preset.name,
        device=device,
        kv_cache_bytes=kv_cache_bytes,
        max_model_len=length,
        block_size=block,
        kv_bytes_per_token=round(plan.bytes_per_token(), 1),
        kv_tokens=plan.tokens(kv_cache_bytes),
    )
