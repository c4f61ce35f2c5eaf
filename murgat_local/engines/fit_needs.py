"""What a model asks of a GPU: its weights' bytes and the KV cache vLLM plans for it.

The weights are read from the checkpoint's safetensors headers; the KV cache is computed by
vLLM's own code from the model's config alone (see `fit.py`'s docstring). Apart from `fit.py`,
which chooses a layout and gives the verdict, because these sizes follow the model's files and
vLLM's code, not the GPU kinds or a preset's layouts.
"""

from __future__ import annotations

import functools
import math
import pathlib
import tempfile
from dataclasses import dataclass
from typing import Any

from .shards import safetensors_header

# ---------------------------------------------------------------------------- the weights


# Tensors vLLM does not load for a thinker-only Omni judge.
_NOT_THINKER = ("talker.", "code2wav.", "token2wav.")
_FLOATS = ("F64", "F32", "F16", "BF16")
_DTYPE_WIDTH = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


def safetensors_bytes(directory: pathlib.Path, dtype: str | None = None) -> int | None:
    """Bytes of the weights vLLM loads from `directory`'s safetensors, read from their headers:
    floating tensors at `dtype` (the engine's; None or "auto": as stored), an Omni model's
    talker and vocoder left out. None where the folder has no safetensors."""
    files = sorted(p for p in directory.glob("*.safetensors") if p.is_file())
    if not files:
        return None
    width = _DTYPE_WIDTH.get(str(dtype).lower())
    total = 0
    for path in files:
        _, header = safetensors_header(path)
        for name, tensor in header.items():
            if name == "__metadata__" or name.startswith(_NOT_THINKER):
                continue
            stored = tensor["data_offsets"][1] - tensor["data_offsets"][0]
            if width and tensor["dtype"] in _FLOATS:
                stored = math.prod(tensor["shape"]) * width
            total += stored
    return total


# ---------------------------------------------------------------------------- the KV cache


@dataclass(frozen=True)
class KvPlan:
    """A model's KV cache as vLLM plans it at start: the per-layer specs grouped by vLLM's own
    `get_kv_cache_groups`, and the config they were grouped under."""

    vllm_config: Any
    specs: dict
    groups: list

    def need_bytes(self) -> int:
        """What vLLM's start-up check asks of the KV cache memory for one request of
        `max_model_len` tokens (the groups' padded blocks, and the null block the pool keeps)."""
        from vllm.v1.core.kv_cache_utils import (
            _max_memory_usage_bytes_from_groups,
            _pool_bytes_per_block,
        )

        if not self.groups:
            return 0
        return _max_memory_usage_bytes_from_groups(
            self.vllm_config, self.groups
        ) + _pool_bytes_per_block(self.vllm_config, self.groups)

    def tokens(self, cache_bytes: int) -> int:
        """The token capacity vLLM logs at start ("KV cache size: N tokens") for a KV cache of
        `cache_bytes`, through the functions its engine core calls; 0 where vLLM would refuse
        to start (not one request of `max_model_len` fits)."""
        from vllm.v1.core.kv_cache_utils import (
            generate_scheduler_kv_cache_config,
            get_kv_cache_capacity,
            get_kv_cache_configs,
        )

        if not self.groups:
            return 0
        try:
            configs = get_kv_cache_configs(self.vllm_config, [dict(self.specs)], [cache_bytes])
        except ValueError:
            return 0
        scheduler = generate_scheduler_kv_cache_config(configs)
        return get_kv_cache_capacity(self.vllm_config, scheduler)[0]

    def bytes_per_token(self) -> float:
        """KV bytes one token of a `max_model_len` request takes, as vLLM counts them (its
        groups' padded blocks over the request's length)."""
        from vllm.v1.core.kv_cache_utils import _max_memory_usage_bytes_from_groups

        length = self.vllm_config.model_config.max_model_len
        if not self.groups:
            return 0.0
        return _max_memory_usage_bytes_from_groups(self.vllm_config, self.groups) / length


@functools.lru_cache(maxsize=64)
def kv_plan(
    config_json: str,
    *,
    dtype: str,
    max_model_len: int,
    tensor_parallel_size: int,
    max_num_batched_tokens: int,
    kv_cache_dtype: str = "auto",
    device: str = "cuda",
    block_size: int | None = None,
) -> KvPlan:
    """vLLM's KV plan, per GPU, for the model whose config.json text is `config_json`, on
    `device` ("cuda": vLLM's CUDA build; "cpu": its CPU build, block `block_size`)."""
    from vllm.config import ModelConfig

    # The folder lives while vLLM reads it: `VllmConfig` looks at the model's files again.
    with tempfile.TemporaryDirectory(prefix="murgat-fit-") as folder:
        pathlib.Path(folder, "config.json").write_text(config_json, encoding="utf-8")
        model = ModelConfig(
            model=folder,
            tokenizer=folder,
            skip_tokenizer_init=True,
            dtype=dtype,  # type: ignore[arg-type]  # the user's string; vLLM checks it
            max_model_len=max_model_len,
        )
        return _kv_plan(
            model,
            tensor_parallel_size,
            max_model_len,
            max_num_batched_tokens,
            kv_cache_dtype,
            device,
            block_size or (16 if device == "cuda" else 128),
        )


def kv_need_bytes(config_json: str, **sizing) -> int:
    """Bytes of KV cache, per GPU, that vLLM's start-up check asks for one request of
    `max_model_len` tokens (`kv_plan`'s arguments)."""
    return kv_plan(config_json, **sizing).need_bytes()


def _kv_plan(
    model,
    tensor_parallel_size: int,
    max_model_len: int,
    max_num_batched_tokens: int,
    kv_cache_dtype: str,
    device_name: str,
    block_size: int,
) -> KvPlan:
    import torch
    from vllm.config import CacheConfig, DeviceConfig, ParallelConfig, SchedulerConfig, VllmConfig
    from vllm.platforms import current_platform
    from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE
    from vllm.v1.core.kv_cache_utils import get_kv_cache_groups
    from vllm.v1.kv_cache_interface import FullAttentionSpec, SlidingWindowSpec

    parallel = ParallelConfig(tensor_parallel_size=tensor_parallel_size)
    # vLLM's CUDA build on a box with no GPU (a bundle checked before it travels) finds no
    # platform and cannot guess the device: the sizing is for a GPU, so name it.
    device = DeviceConfig(device="auto" if current_platform.device_type else "cuda")
    vllm_config = VllmConfig(
        device_config=device,
        model_config=model,
        parallel_config=parallel,
        cache_config=CacheConfig(
            block_size=block_size,
            cache_dtype=kv_cache_dtype,  # type: ignore[arg-type]  # the user's string; vLLM checks it
        ),
        scheduler_config=SchedulerConfig(
            max_num_batched_tokens=max_num_batched_tokens,
            max_model_len=max_model_len,
            is_encoder_decoder=False,
        ),
    )
    # What vLLM's build for `device_name` sets, where this process may run the other build.
    vllm_config.cache_config.block_size = block_size
    vllm_config.scheduler_config.async_scheduling = device_name == "cuda"
    vllm_config.scheduler_config.disable_hybrid_kv_cache_manager = False
    # The layout each build's attention backend prefers (FlashAttention takes vLLM's default;
    # the CPU backend reads head-major blocks only): it sets how blocks are padded.
    vllm_config.cache_config.kv_cache_layout = "LBNHC" if device_name == "cuda" else "LBHNC"
    cache_dtype = (
        model.dtype
        if kv_cache_dtype == "auto"
        else STR_DTYPE_TO_TORCH_DTYPE.get(kv_cache_dtype, torch.uint8)
    )
    text = model.hf_text_config
    layer_types = getattr(text, "layer_types", None) or []
    window = model.get_sliding_window()
    # Layers that read another layer's cache (Gemma 3n / 4 KV sharing) hold none of their own.
    owners = model.get_total_num_hidden_layers() - (getattr(text, "num_kv_shared_layers", 0) or 0)
    specs: dict = {}
    for i in range(owners):
        arch = model.model_arch_config[i]
        shape = {
            "block_size": block_size,
            "num_kv_heads": model.get_num_kv_heads(parallel, arch),
            "head_size": arch.head_size,
            "dtype": cache_dtype,
        }
        sliding = i < len(layer_types) and layer_types[i] == "sliding_attention" and window
        specs[f"model.layers.{i}.self_attn.attn"] = (
            SlidingWindowSpec(sliding_window=window, **shape)
            if sliding
            else FullAttentionSpec(**shape)
        )
    # Grouping may unify the specs in place: it gets a copy.
    return KvPlan(vllm_config, specs, get_kv_cache_groups(vllm_config, dict(specs)))
