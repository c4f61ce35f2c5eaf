"""Will a model start on a GPU box? The weights, the KV cache vLLM asks for one request of the
context, the start-up profile's estimate, and the room between them, per GPU kind and count
(`murgat models --fit`); and the tokens a given KV cache holds (`--kv-cache-bytes`).

The KV cache is sized by vLLM's own code: a `VllmConfig` is built from the model's config alone
(no weights, no GPU), one `KVCacheSpec` is made per attention layer (`fit_needs.kv_plan`), and
vLLM's grouping and sizing functions, those its engine core calls at start, turn them into the
bytes one request needs and the capacity of a cache. The config is given the settings vLLM picks
on the build sized for (CUDA: block 16, asynchronous scheduling, the GPU kind's batched-token
default; CPU: murgat's block 32), since this code may run where vLLM is the other build. What
vLLM's start-up profile measures on the GPU (activations, CUDA context, the encoder's pass) is
estimated from the config and named as such.

The weights are read from the checkpoint's safetensors headers (at the engine's dtype; for an
Omni model its thinker only); where the weights are absent, from the preset's `[fit]` table
(`weights_bytes`, and `config`: the text model's config.json fields), marked as computed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .fit_needs import kv_plan
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
    kv_cache_dtype: str | None = None

    def engine_args(self) -> dict:
        args: dict = {"tensor_parallel_size": self.tensor_parallel_size}
        if self.max_num_batched_tokens:
            args["max_num_batched_tokens"] = self.max_num_batched_tokens
        if self.max_model_len:
            args["max_model_len"] = self.max_model_len
        if self.kv_cache_dtype:
            args["kv_cache_dtype"] = self.kv_cache_dtype
        return args

    def cost(self, context: int, batched: int) -> list[str]:
        """What this layout gives up against the preset's `context` and `batched` tokens."""
        costs = []
        if self.max_model_len and self.max_model_len < context:
            costs.append(f"prompts over {self.max_model_len} tokens are refused (not {context})")
        if self.max_num_batched_tokens and self.max_num_batched_tokens < batched:
            costs.append(
                f"{self.max_num_batched_tokens} tokens a step (not {batched}): long prompts "
                "prefill in more steps, slower"
            )
        if self.kv_cache_dtype:
            costs.append(
                f"KV cache in {self.kv_cache_dtype}: verdicts may differ from the preset's "
                "(a new engine identity, no cached verdict reused)"
            )
        return costs


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
    kv_room_gib: float = 0.0
    profile: dict | None = None
    cost: tuple[str, ...] = ()
    variant: str | None = None

    @property
    def profile_gib(self) -> float:
        """What vLLM's start-up profile takes beside weights and KV (estimated: `profile`)."""
        return round(sum(v for v in (self.profile or {}).values() if isinstance(v, float)), 2)

    @property
    def headroom_gib(self) -> float:
        """What is left once the KV cache and the start-up profile's estimate are taken."""
        return round(self.kv_room_gib - self.kv_need_gib, 2)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "gpu": self.gpu,
            "gpus": self.gpus,
            "weights_gib": self.weights_gib,
            "weights_from": self.weights_from,
            "kv_need_gib": self.kv_need_gib,
            "room_gib": self.room_gib,
            "kv_room_gib": self.kv_room_gib,
            "headroom_gib": self.headroom_gib,
            # vLLM measures these on the GPU at start; here they are estimates, so named.
            "profile_estimate_gib": self.profile,
            "fits": self.fits,
            "suggest": self.suggest,
            "suggest_cost": list(self.cost),
            "variant": self.variant,
            "layout": self.layout.engine_args(),
        }

    def line(self) -> str:
        """The one line `--fit` prints for this model, and a refused start quotes."""
        where = f"{self.gpus}x {self.gpu}"
        head = (
            f"{self.name} on {where} ({_args(self.layout.engine_args())}): weights {self.weights_gib} GiB "
            f"({self.weights_from}), KV cache for one request {self.kv_need_gib} GiB, room "
            f"{self.room_gib} GiB, start-up profile about {self.profile_gib} GiB (estimated), "
            f"KV room {self.kv_room_gib} GiB"
        )
        if self.fits:
            return f"{head}: fits, {self.headroom_gib} GiB to spare"
        if self.suggest:
            cost = f" (costs: {'; '.join(self.cost)})" if self.cost else ""
            return f"{head}: does not fit; fits with {_args(self.suggest)}{cost}{self._or()}"
        return f"{head}: does not fit{self._or()}"

    def _or(self) -> str:
        return f"; or take the preset {self.variant}, which fits" if self.variant else ""


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


# What a CUDA context, cuBLAS workspaces and NCCL hold outside torch's allocator on a CUDA 13
# box: vLLM counts it as non-torch memory at start. A typical figure, not a measurement.
_CUDA_CONTEXT_GIB = 0.75


def profile_estimate(
    config_json: str, batched: int, tp: int, max_num_seqs: int, dtype: str | None
) -> dict:
    """What vLLM's start-up profile takes beside weights and KV, per GPU, estimated from the
    config (vLLM measures it on the GPU): the peak activations of one forward pass over
    `batched` tokens (hidden states, the MLP's gate and up projections, attention's q/k/v) and
    the sampler's float32 logits for `max_num_seqs` sequences; the CUDA context; and for a
    model with a vision tower, the encoder's profiling pass over as many patches."""
    config = json.loads(config_json)
    thinker = config.get("thinker_config") or config
    text = thinker.get("text_config") or thinker
    width = 4 if str(dtype).lower() in ("float32", "float") else 2
    hidden = text.get("hidden_size") or 0
    inter = text.get("intermediate_size") or 4 * hidden
    heads = (text.get("num_attention_heads") or 0) + 2 * (text.get("num_key_value_heads") or 0)
    head_dim = text.get("head_dim") or (hidden // max(text.get("num_attention_heads") or 1, 1))
    per_token = (4 * hidden + 2 * inter / tp + heads * head_dim / tp) * width
    vocab = text.get("vocab_size") or config.get("vocab_size") or 0
    out = {
        "activations_gib": round((batched * per_token + max_num_seqs * vocab * 4) / GIB, 2),
        "cuda_context_gib": _CUDA_CONTEXT_GIB,
    }
    vision = thinker.get("vision_config") or config.get("vision_config")
    if vision:
        v_hidden = vision.get("hidden_size") or vision.get("embed_dim") or 0
        v_inter = vision.get("intermediate_size") or 4 * v_hidden
        out["encoder_profile_gib"] = round(batched * (4 * v_hidden + 2 * v_inter) * width / GIB, 2)
    return out


class _Sizer:
    """KV need and room, per GPU, of one model under one layout on one GPU kind."""

    def __init__(self, preset, gpu: Gpu, weights: int, config_json: str, options: dict):
        self.preset, self.gpu, self.weights, self.config_json = preset, gpu, weights, config_json
        self.args = {**preset.engine_args, **options}
        self.share = self.args.get("gpu_memory_utilization") or DEFAULT_MEMORY_SHARE
        self.context = self.args.get("max_model_len") or _context(preset, config_json)

    def batched(self, layout: Layout) -> int:
        return (
            layout.max_num_batched_tokens
            or self.args.get("max_num_batched_tokens")
            or self.gpu.batched_tokens
        )

    def profile(self, layout: Layout) -> dict:
        return profile_estimate(
            self.config_json,
            self.batched(layout),
            layout.tensor_parallel_size,
            self.args.get("max_num_seqs") or 256,
            self.args.get("dtype"),
        )

    def __call__(self, layout: Layout) -> tuple[float, float, float]:
        """(KV need, room beside the weights, room left to the KV cache once the start-up
        profile's estimate is taken), in GiB per GPU."""
        tp = layout.tensor_parallel_size
        profile = _total(self.profile(layout)) * GIB
        kv = kv_plan(
            self.config_json,
            dtype=self.args.get("dtype") or "auto",
            max_model_len=layout.max_model_len or self.context,
            tensor_parallel_size=tp,
            max_num_batched_tokens=self.batched(layout),
            kv_cache_dtype=layout.kv_cache_dtype or self.args.get("kv_cache_dtype") or "auto",
        ).need_bytes()
        # Tensor parallelism splits the weights (nearly evenly: norms and small towers repeat).
        room = self.gpu.memory_gib * GIB * self.share - self.weights / tp
        kv_room = room - profile
        if explicit := self.args.get("kv_cache_memory_bytes"):
            # A fixed KV cache per GPU, in place of the share; the weights and the profile's
            # peak must fit beside it.
            room = min(explicit, self.gpu.memory_gib * GIB - self.weights / tp)
            kv_room = min(explicit, self.gpu.memory_gib * GIB - self.weights / tp - profile)
        return kv / GIB, room / GIB, kv_room / GIB


def _search(size: _Sizer, start: Layout, count: int) -> Layout | None:
    """The first layout that fits: tensor parallel over the GPUs there are; then, on as many
    GPUs as the start, fewer batched tokens, an fp8 KV cache, a shorter context (each with
    fewer batched tokens); then more GPUs."""
    base: dict = {"gpus": start.gpus, "tensor_parallel_size": start.tensor_parallel_size}
    fewer = [b for b in _BATCHED if b < size.gpu.batched_tokens]
    fp8 = [] if size.args.get("kv_cache_dtype") not in (None, "auto") else ["fp8"]
    tries = [Layout(gpus=k, tensor_parallel_size=k) for k in _TP if start.gpus < k <= count]
    tries += [Layout(**base, max_num_batched_tokens=b) for b in fewer]
    tries += [
        Layout(**base, max_num_batched_tokens=b, kv_cache_dtype=d)
        for d in fp8
        for b in (None, *fewer)
    ]
    tries += [
        Layout(**base, max_model_len=n, max_num_batched_tokens=b, kv_cache_dtype=d)
        for d in (None, *fp8)
        for n in _CONTEXTS
        if n < size.context
        for b in (None, *fewer)
    ]
    tries += [Layout(gpus=k, tensor_parallel_size=k) for k in _TP if k > max(count, start.gpus)]
    return next((layout for layout in tries if _fits(size, layout)), None)


def _fits(size: _Sizer, layout: Layout) -> bool:
    try:
        kv, _, kv_room = size(layout)
    except ValueError:  # vLLM refuses the layout (a tensor parallel size the heads do not divide)
        return False
    return kv <= kv_room


def _total(profile: dict) -> float:
    return sum(v for v in profile.values() if isinstance(v, float))


def _suggestion(layout: Layout, count: int) -> dict:
    args = layout.engine_args()
    return {"gpus": layout.gpus, **args} if layout.gpus > count else args


# The engine arguments that change what a model needs of a GPU: a run's own, where it sets
# them, are what is sized (over the preset's and its layout's).
SIZING_KEYS = (
    "dtype",
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "tensor_parallel_size",
    "kv_cache_dtype",
    "kv_cache_memory_bytes",
    "gpu_memory_utilization",
)
_LAYOUT_KEYS = ("tensor_parallel_size", "max_num_batched_tokens", "max_model_len", "kv_cache_dtype")


def fit_preset(
    preset,
    gpu_name: str,
    gpu: Gpu,
    count: int = 1,
    options: dict | None = None,
    variants: Callable[[], Iterable] | None = None,
) -> Fit | None:
    """`preset` on `count` GPUs of kind `gpu` under `options` (a run's engine arguments, over
    the preset's): its layout for them (the one it holds, else its engine arguments as set,
    the run's winning), whether that fits, and what would where it does not. None where
    neither the folder nor the preset says what the model is."""
    options = {k: v for k, v in (options or {}).items() if k in SIZING_KEYS and v is not None}
    config_json = _config_json(preset)
    weights, weights_from = _weights(preset)
    if config_json is None or weights is None:
        return None
    size = _Sizer(preset, gpu, weights, config_json, options)
    held = choose_layout(preset_layouts(preset), gpu.memory_gib)
    tp = min(size.args.get("tensor_parallel_size") or 1, count)
    layout = (
        held
        if held is not None and held.gpus <= count
        else Layout(gpus=tp, tensor_parallel_size=tp)
    )
    own = {k: options[k] for k in _LAYOUT_KEYS if k in options}
    if own:  # the run's own layout arguments are the layout
        tp = min(int(own.get("tensor_parallel_size", layout.tensor_parallel_size)), count)
        layout = Layout(
            **{**layout.__dict__, **own, "gpus": max(tp, 1), "tensor_parallel_size": tp}
        )
    kv, room, kv_room = size(layout)
    fits = kv <= kv_room
    suggest: dict | None = None
    cost: tuple[str, ...] = ()
    if not fits:
        # On the GPUs given first: the preset's own layout where it needs no more of them,
        # else the search (which tries more GPUs last).
        better = (
            held
            if held is not None and held != layout and held.gpus <= count and _fits(size, held)
            else _search(size, layout, count)
        )
        suggest = _suggestion(better, count) if better else None
        cost = tuple(better.cost(size.context, size.batched(layout))) if better else ()
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
        kv_room_gib=round(kv_room, 2),
        profile=size.profile(layout),
        cost=cost,
        variant=None
        if fits or variants is None
        else _variant(preset, gpu_name, gpu, count, variants),
    )


def _variant(
    preset, gpu_name: str, gpu: Gpu, count: int, candidates: Callable[[], Iterable]
) -> str | None:
    """Another preset of the same model folder that fits these GPUs (a smaller layout), among
    `candidates()` (`presets.all_presets`: given by the caller, so sizing never loads presets)."""
    for other in candidates():
        if other.name == preset.name or other.path != preset.path:
            continue
        fit = fit_preset(other, gpu_name, gpu, count)
        if fit is not None and fit.fits:
            return other.name
    return None


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


def check_box(preset, options: dict | None = None) -> str | None:
    """`refusal` for `preset` under `options` on the GPUs this process sees."""
    seen = seen_gpus()
    if seen is None:
        return None
    memory, count = seen
    card = gpu_for_memory(memory)
    return refusal(True, fit_preset(preset, f"{memory:.1f} GiB GPU", card, count, options))
