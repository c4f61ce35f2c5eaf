"""A preset for a model folder that has none: what it takes and its limits, read from the
folder's own `config.json` and processor files (nothing is loaded or downloaded).

Whatever cannot be read there is a default, and each default is named in `Preset.assumed`: the
CLI prints them and a run records them with the judge's identity, so a result can be traced to
the assumptions it was made under.
"""

from __future__ import annotations

import json
import pathlib

# What vLLM's model for an architecture can take at most (its registry, read for 0.32). A
# folder's config can take away a tower (Gemma 4 31B has no audio_config); it never adds one.
ARCH_MODALITIES: dict[str, tuple[str, ...]] = {
    "Qwen3OmniMoeForConditionalGeneration": ("text", "image", "video", "audio"),
    "Qwen3OmniMoeThinkerForConditionalGeneration": ("text", "image", "video", "audio"),
    "Qwen2_5OmniThinkerForConditionalGeneration": ("text", "image", "video", "audio"),
    "Qwen2_5OmniForConditionalGeneration": ("text", "image", "video", "audio"),
    "Qwen2_5OmniModel": ("text", "image", "video", "audio"),
    "Qwen2_5_VLForConditionalGeneration": ("text", "image", "video"),
    "Qwen2VLForConditionalGeneration": ("text", "image", "video"),
    "Qwen3VLForConditionalGeneration": ("text", "image", "video"),
    "Qwen3VLMoeForConditionalGeneration": ("text", "image", "video"),
    "Qwen3_5ForConditionalGeneration": ("text", "image", "video"),
    "Qwen3_5MoeForConditionalGeneration": ("text", "image", "video"),
    "Qwen2AudioForConditionalGeneration": ("text", "audio"),
    "VoxtralForConditionalGeneration": ("text", "audio"),
    "Gemma3ForConditionalGeneration": ("text", "image"),
    "Gemma3nForConditionalGeneration": ("text", "image", "audio"),
    "Gemma4ForConditionalGeneration": ("text", "image", "video", "audio"),
    "NemotronH_Nano_Omni_Reasoning_V3": ("text", "image", "video", "audio"),
    "NemotronH_Nano_VL_V2": ("text", "image", "video"),
    "MiniCPMO": ("text", "image", "video", "audio"),
    "MiniCPMV": ("text", "image", "video"),
    "Phi4MMForCausalLM": ("text", "image", "audio"),
    "MiMoV2OmniForCausalLM": ("text", "image", "video", "audio"),
    "LlavaOnevisionForConditionalGeneration": ("text", "image", "video"),
    "InternVLChatModel": ("text", "image", "video"),
}

# Keys under which a config carries an audio tower; without one the model hears nothing.
_AUDIO_KEYS = ("audio_config", "sound_config", "audio_tower_config", "speech_config")
_VISION_KEYS = ("vision_config", "vision_tower_config", "visual")

DEFAULT_MAX_MODEL_LEN = 32768
DEFAULT_MM_LIMITS = {"image": 8, "video": 2, "audio": 4}

# What a model needs in memory beside its weights, on vLLM's CPU build (`memory_need`): a KV
# cache of this many full contexts, and the worker's own runtime (torch, kernels, buffers:
# 1.44 GiB measured for tiny-qwen3-vl under vLLM 0.32, so the rest of it goes to the cache).
KV_CONTEXTS = 4
CPU_RUNTIME_GIB = 2
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_WIDE = ("float32", "float", "fp32")


def read_object(path: pathlib.Path) -> dict:
    """The JSON object in a small file beside a model; {} when it is missing, unreadable or not
    an object (a folder is read for what it holds, never stopped on)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _processor_parts(directory: pathlib.Path) -> dict:
    """The processor's saved parts merged: processor_config.json (transformers 5 nests its image,
    video and audio processors there) and the older separate files."""
    merged = dict(read_object(directory / "processor_config.json"))
    for name, key in (
        ("preprocessor_config.json", "image_processor"),
        ("video_preprocessor_config.json", "video_processor"),
    ):
        found = read_object(directory / name)
        if found:
            merged.setdefault(key, found)
            if "feature_extractor_type" in found:
                merged.setdefault("feature_extractor", found)
    return merged


def _has(config: dict, keys: tuple[str, ...]) -> bool:
    return any(config.get(k) not in (None, {}) for k in keys)


def _modalities(arch: str, config: dict, processor: dict, assumed: list[str]) -> tuple[str, ...]:
    known = ARCH_MODALITIES.get(arch)
    if known is not None:
        found = set(known)
        if (
            "audio" in found
            and not _has(config, _AUDIO_KEYS)
            and arch.startswith(("Gemma4", "NemotronH"))
        ):
            found.discard("audio")  # a size of the family built without the audio tower
        return tuple(m for m in ("text", "image", "video", "audio") if m in found)
    found = {"text"}
    if _has(config, _VISION_KEYS) or "image_token_id" in config or "image_processor" in processor:
        found.add("image")
    if "video_token_id" in config or "video_processor" in processor:
        found.add("video")
    if _has(config, _AUDIO_KEYS) or "feature_extractor" in processor:
        found.add("audio")
    if len(found) > 1:
        assumed.append(
            f"modalities {', '.join(sorted(found))}: architecture {arch} is not one this version "
            "knows; read from the config's towers and the processor's parts"
        )
    return tuple(m for m in ("text", "image", "video", "audio") if m in found)


def _text_config(config: dict) -> dict:
    for outer in (config, config.get("thinker_config") or {}):
        for key in ("text_config", "llm_config", "language_config"):
            if isinstance(outer.get(key), dict):
                return outer[key]
    return config


def _context(config: dict, assumed: list[str]) -> int:
    declared = _text_config(config).get("max_position_embeddings")
    if isinstance(declared, int) and 0 < declared <= DEFAULT_MAX_MODEL_LEN:
        return declared
    where = f"the config allows {declared}" if declared else "the config names none"
    assumed.append(f"max_model_len {DEFAULT_MAX_MODEL_LEN} ({where})")
    return DEFAULT_MAX_MODEL_LEN


def kv_bytes_per_token(config: dict, dtype: str | None = None) -> int | None:
    """Bytes of KV cache one token takes in every layer (keys and values), from the config's
    text model; None where the config does not say."""
    text = _text_config(config)
    layers, heads = text.get("num_hidden_layers"), text.get("num_attention_heads")
    if not isinstance(layers, int) or not isinstance(heads, int) or heads <= 0:
        return None
    kv_heads = text.get("num_key_value_heads") or heads
    head_dim = text.get("head_dim") or (text.get("hidden_size") or 0) // heads
    if dtype in (None, "auto"):  # the model's own
        dtype = (
            text.get("dtype")
            or text.get("torch_dtype")
            or config.get("dtype")
            or config.get("torch_dtype")
        )
    width = 4 if str(dtype).lower() in _WIDE else 2
    return layers * kv_heads * head_dim * 2 * width


def memory_need(directory: pathlib.Path, engine_args: dict) -> int | None:
    """Bytes an engine of the model in `directory` needs on vLLM's CPU build: its weights as
    stored, a KV cache of `KV_CONTEXTS` contexts of `max_model_len` tokens, and the runtime.
    None where the folder cannot be read (its engine then fails to start on its own)."""
    config = read_object(directory / "config.json")
    kv = kv_bytes_per_token(config, engine_args.get("kv_cache_dtype") or engine_args.get("dtype"))
    if kv is None:
        return None
    context = engine_args.get("max_model_len") or _text_config(config).get(
        "max_position_embeddings"
    )
    if not isinstance(context, int):
        return None
    # The folder's own files only: vLLM reads no weights from a subfolder (some checkpoints keep
    # a second copy in `original/`).
    weights = sum(
        p.stat().st_size for p in directory.iterdir() if p.is_file() and p.name.endswith(_WEIGHTS)
    )
    return weights + KV_CONTEXTS * context * kv + CPU_RUNTIME_GIB * 1024**3


def _size(n: float) -> str:
    return f"{n / 1024**3:.2f} GiB" if n >= 1024**3 else f"{n / 1024**2:.1f} MiB"


def audio_window(model_type: str, processor: dict) -> float | None:
    """The longest clip the model hears whole, where its processor cuts longer ones."""
    extractor = processor.get("feature_extractor") or {}
    if model_type == "qwen2_audio":
        return float(extractor.get("chunk_length", 30))
    if model_type == "gemma4" and extractor:
        return (
            processor.get("audio_seq_length", 750) * processor.get("audio_ms_per_token", 40) / 1000
        )
    return None


def read_folder(directory: pathlib.Path) -> dict:
    """Everything a preset needs from `directory`: architecture, modalities, engine arguments,
    the audio window, and the list of what was assumed."""
    config = read_object(directory / "config.json")
    processor = _processor_parts(directory)
    assumed: list[str] = []
    arch = (config.get("architectures") or ["unknown"])[0]
    if not config:
        assumed.append("no readable config.json: text only")
    modalities = _modalities(arch, config, processor, assumed) if config else ("text",)
    engine: dict = {"max_model_len": _context(config, assumed)}
    media = [m for m in modalities if m != "text"]
    if config.get("auto_map"):
        assumed.append("trust_remote_code off: the folder's own code (auto_map) is not run")
    if media:
        engine["limit_mm_per_prompt"] = {m: DEFAULT_MM_LIMITS[m] for m in media}
        assumed.append(
            "limit_mm_per_prompt " + ", ".join(f"{m}={DEFAULT_MM_LIMITS[m]}" for m in media)
        )
    need = memory_need(directory, engine) if config else None
    if need is not None:  # as every preset is sized there (`Preset.on_runtime`)
        kv = need - CPU_RUNTIME_GIB * 1024**3
        assumed.append(
            f"gpu_memory_utilization on vLLM's CPU build: the share of the machine's memory that holds "
            f"{_size(need)} (weights and a KV cache of {KV_CONTEXTS} contexts of {engine['max_model_len']} "
            f"tokens, {_size(kv)}, and {CPU_RUNTIME_GIB} GiB for the runtime); on a GPU, vLLM's default"
        )
    return {
        "architecture": arch,
        "modalities": modalities,
        "engine_args": engine,
        "max_audio_seconds": audio_window(config.get("model_type", ""), processor)
        if "audio" in modalities
        else None,
        "trust_remote_code": False,
        "assumed": tuple(assumed),
    }
