"""Will a model start on a GPU box? The weights, the KV cache vLLM asks for one request of the
preset's context, and the room between them, per GPU kind and count (`murgat models --fit`).

The KV cache is sized by vLLM's own code: a `VllmConfig` is built from the model's config alone
(no weights, no GPU), one `KVCacheSpec` is made per attention layer from what vLLM's
`ModelConfig` reads of that layer (KV heads per GPU, head size, sliding window), and vLLM's
`max_memory_usage_bytes` sums what they ask for one request of `max_model_len` tokens, as the
engine's start-up check does. The config is given the settings vLLM picks on a CUDA box (block
size 16, asynchronous scheduling, the batched-token default of the GPU kind), since this code
may run where vLLM is the CPU build.

The weights are read from the checkpoint's safetensors headers (at the engine's dtype; for an
Omni model its thinker only); where the weights are absent, from the preset's `[fit]` table
(`weights_bytes`, and `config`: the text model's config.json fields), marked as computed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .fit_needs import kv_need_bytes
from .fit_needs import safetensors_bytes as safetensors_bytes

GIB = 1024**3

# vLLM's default `gpu_memory_utilization`, for a preset that sets none.
DEFAULT_MEMORY_SHARE = 0.92


@dataclass(frozen=True)
class Gpu:
    """One GPU kind: its memory as the card reports it (torch's total_memory), and the
    `max_num_batched_tokens` vLLM 0.32 picks on it for the `LLM` class (16,384 on cards of
    70 GiB or more other than A100s, else 8,192: `EngineArgs.get_batch_defaults`)."""

    memory_gib: float
    batched_tokens: int


GPUS = {
    "h100": Gpu(79.6, 16384),
    "h200": Gpu(140.4, 16384),
    "a100-80": Gpu(79.2, 8192),
    "a100-40": Gpu(39.4, 8192),
    "l40s": Gpu(44.4, 8192),
    "rtx4090": Gpu(23.6, 8192),
}

# The batched-token counts a suggestion tries, largest first: fewer in-flight tokens shrink
# what sliding-window layers hold.
_BATCHED = (8192, 4096, 2048)
_CONTEXTS = (16384, 8192)
_TP = (1, 2, 4, 8)


def gpu_for_memory(memory_gib: float) -> Gpu:
    """A GPU of `memory_gib`, with the batched-token default vLLM gives a card that size."""
    return Gpu(memory_gib, 16384 if memory_gib >= 70 else 8192)


@dataclass(frozen=True)
class Layout:
    """How a model is laid out on one box: the GPUs it uses and the engine arguments that
    change with them."""

    gpus: int = 1
    tensor_parallel_size: int = 1
    max_num_batched_tokens: int | None = None
    max_model_len: int | None = None

    def engine_args(self) -> dict:
        args = {"tensor_parallel_size": self.tensor_parallel_size}
        if self.max_num_batched_tokens:
            args["max_num_batched_tokens"] = self.max_num_batched_tokens
        if self.max_model_len:
            args["max_model_len"] = self.max_model_len
        return args


@dataclass(frozen=True)
class Fit:
    """One model on one GPU kind and count: per GPU, the weights, the KV cache one request
    needs, and the room the memory share leaves for it."""

    name: str
    gpu: str
    gpus: int
    weights_gib: float
    weights_from: str
    kv_need_gib: float
    room_gib: float
    fits: bool
    suggest: dict | None
    layout: Layout

    @property
    def headroom_gib(self) -> float:
        """What is left, beside the KV cache, for activations and CUDA graphs."""
        return round(self.room_gib - self.kv_need_gib, 2)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "gpu": self.gpu,
            "gpus": self.gpus,
            "weights_gib": self.weights_gib,
            "weights_from": self.weights_from,
            "kv_need_gib": self.kv_need_gib,
            "room_gib": self.room_gib,
            "headroom_gib": self.headroom_gib,
            "fits": self.fits,
            "suggest": self.suggest,
            "layout": self.layout.engine_args(),
        }

    def line(self) -> str:
        """The one line `--fit` prints for this model, and a refused start quotes."""
        where = f"{self.gpus}x {self.gpu}"
        head = (
            f"{self.name} on {where} ({_args(self.layout.engine_args())}): weights {self.weights_gib} GiB "
            f"({self.weights_from}), KV cache for one request {self.kv_need_gib} GiB, room "
            f"{self.room_gib} GiB"
        )
        if self.fits:
            return f"{head}: fits, {self.headroom_gib} GiB left for activations and CUDA graphs"
        if self.suggest:
            return f"{head}: does not fit; fits with {_args(self.suggest)}"
        return f"{head}: does not fit"


def _args(args: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


# ---------------------------------------------------------------------------- layouts and verdicts


def choose_layout(layouts: dict[str, Layout], memory_gib: float) -> Layout | None:
    """The layout a preset holds for GPUs of `memory_gib`: the one for the largest GPU kind it
    names that is no larger than these (a card between two kinds takes the smaller's); None
    where the GPUs are smaller than every kind it names."""
    known = [(GPUS[kind].memory_gib, kind) for kind in layouts if kind in GPUS]
    fitting = [m_kind for m_kind in known if m_kind[0] <= memory_gib + 0.5]
    return layouts[max(fitting)[1]] if fitting else None


def preset_layouts(preset) -> dict[str, Layout]:
    data = preset.fit.layouts if preset.fit else {}
    return {kind: Layout(**spec.model_dump()) for kind, spec in data.items()}


def runtime_layout(preset, memory_gib: float, count: int) -> Layout | None:
    """The preset's layout for `count` GPUs of `memory_gib` each, where it has one those GPUs
    can hold (`Preset.on_gpus` applies it)."""
    layout = choose_layout(preset_layouts(preset), memory_gib)
    return layout if layout is not None and layout.gpus <= count else None


def _config_json(preset) -> str | None:
    config = preset.path / "config.json"
    if config.is_file():
        return config.read_text(encoding="utf-8")
    if preset.fit and preset.fit.config:
        return json.dumps(preset.fit.config)
    return None


def _weights(preset) -> tuple[int | None, str]:
    dtype = preset.engine_args.get("dtype")
    if preset.path.is_dir():
        found = safetensors_bytes(preset.path, dtype)
        if found is not None:
            return found, "safetensors"
    if preset.fit and preset.fit.weights_bytes:
        return preset.fit.weights_bytes, "computed from preset data"
    return None, ""


def _context(preset, config_json: str) -> int:
    if preset.engine_args.get("max_model_len"):
        return preset.engine_args["max_model_len"]
    config = json.loads(config_json)
    for outer in (config, config.get("thinker_config") or {}):
        text = outer.get("text_config") or {}
        if text.get("max_position_embeddings"):
            return text["max_position_embeddings"]
    return config.get("max_position_embeddings") or 32768


class _Sizer:
    """KV need and room, per GPU, of one model under one layout on one GPU kind."""

    def __init__(self, preset, gpu: Gpu, weights: int, config_json: str):
        self.preset, self.gpu, self.weights, self.config_json = preset, gpu, weights, config_json
        self.args = preset.engine_args
        self.share = self.args.get("gpu_memory_utilization") or DEFAULT_MEMORY_SHARE
        self.context = _context(preset, config_json)

    def __call__(self, layout: Layout) -> tuple[float, float]:
        tp = layout.tensor_parallel_size
        kv = kv_need_bytes(
            self.config_json,
            dtype=self.args.get("dtype") or "auto",
            max_model_len=layout.max_model_len or self.context,
            tensor_parallel_size=tp,
            max_num_batched_tokens=(
                layout.max_num_batched_tokens
                or self.args.get("max_num_batched_tokens")
                or self.gpu.batched_tokens
            ),
            kv_cache_dtype=self.args.get("kv_cache_dtype") or "auto",
        )
        # Tensor parallelism splits the weights (nearly evenly: norms and small towers repeat).
        room = self.gpu.memory_gib * GIB * self.share - self.weights / tp
        if explicit := self.args.get("kv_cache_memory_bytes"):
            # A fixed KV cache per GPU, in place of the share; the weights must fit beside it.
            room = min(explicit, self.gpu.memory_gib * GIB - self.weights / tp)
        return kv / GIB, room / GIB


def _search(size: _Sizer, start: Layout, count: int) -> Layout | None:
    """The first layout that fits: tensor parallel over the GPUs there are, fewer batched
    tokens, more GPUs, a shorter context."""
    tries = [Layout(gpus=k, tensor_parallel_size=k) for k in _TP if start.gpus < k <= count]
    tries += [
        Layout(
            gpus=start.gpus,
            tensor_parallel_size=start.tensor_parallel_size,
            max_num_batched_tokens=b,
        )
        for b in _BATCHED
        if b < size.gpu.batched_tokens
    ]
    tries += [Layout(gpus=k, tensor_parallel_size=k) for k in _TP if k > max(count, start.gpus)]
    tries += [
        Layout(gpus=start.gpus, tensor_parallel_size=start.tensor_parallel_size, max_model_len=n)
        for n in _CONTEXTS
        if n < size.context
    ]
    return next((layout for layout in tries if _fits(size, layout)), None)


def _fits(size: _Sizer, layout: Layout) -> bool:
    try:
        kv, room = size(layout)
    except ValueError:  # vLLM refuses the layout (a tensor parallel size the heads do not divide)
        return False
    return kv <= room


def _suggestion(layout: Layout, count: int) -> dict:
    args = layout.engine_args()
    return {"gpus": layout.gpus, **args} if layout.gpus > count else args


def fit_preset(preset, gpu_name: str, gpu: Gpu, count: int = 1) -> Fit | None:
    """`preset` on `count` GPUs of kind `gpu`: its layout for them (the one it holds, else its
    engine arguments as set), whether that fits, and what would where it does not. None where
    neither the folder nor the preset says what the model is."""
    config_json = _config_json(preset)
    weights, weights_from = _weights(preset)
    if config_json is None or weights is None:
        return None
    size = _Sizer(preset, gpu, weights, config_json)
    held = choose_layout(preset_layouts(preset), gpu.memory_gib)
    tp = min(preset.engine_args.get("tensor_parallel_size") or 1, count)
    layout = (
        held
        if held is not None and held.gpus <= count
        else Layout(gpus=tp, tensor_parallel_size=tp)
    )
    kv, room = size(layout)
    fits = kv <= room
    suggest = None
    if not fits:
        better = (
            held
            if held is not None and held != layout and _fits(size, held)
            else _search(size, layout, count)
        )
        suggest = _suggestion(better, count) if better else None
    return Fit(
        name=preset.name,
        gpu=gpu_name,
        gpus=count,
        weights_gib=round(weights / layout.tensor_parallel_size / GIB, 2),
        weights_from=weights_from,
        kv_need_gib=round(kv, 2),
        room_gib=round(room, 2),
        fits=fits,
        suggest=suggest,
        layout=layout,
    )


def refusal(cuda: bool, fit: Fit | None) -> str | None:
    """Why an engine must not start on this box (the `--fit` line), or None: only where CUDA
    is present (vLLM's CPU build sizes its memory otherwise) and the sizing says it will not."""
    if not cuda or fit is None or fit.fits:
        return None
    return fit.line()


def seen_gpus() -> tuple[float, int] | None:
    """(memory in GiB of the first visible GPU, how many are visible), or None without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(0).total_memory / GIB, torch.cuda.device_count()


def check_box(preset) -> str | None:
    """`refusal` for `preset` on the GPUs this process sees."""
    seen = seen_gpus()
    if seen is None:
        return None
    memory, count = seen
    return refusal(True, fit_preset(preset, f"{memory:.1f} GiB GPU", gpu_for_memory(memory), count))
