"""What reached the model: prompt tokens per media modality, counted from the engine's own ids.

A verdict is only as good as the evidence the model received, and a path that loses a clip
(a chat template without its placeholder, a server that drops audio, a processor that makes
zero frames) still yields a fluent YES or NO. Every engine therefore counts, in the prompt
token ids its runtime actually built (placeholders already expanded by the processor), the
tokens of each modality, using one map from token id to modality per model
(`placeholder_tokens`). A cited modality of which zero tokens arrived is an error
(`unreached`), never a verdict; where the ids are not available the count is unknown (None,
with a reason), never an invented zero.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from collections.abc import Iterable, Mapping

MODALITIES = ("image", "video", "audio")

# Config keys that name a modality's placeholder token (Qwen: *_token_id / *_token_index;
# LLaVA-style: image_token_index; Gemma 3: image_token_index; Gemma 4: *_token_id).
_CONFIG_KEYS = {f"{m}_{suffix}": m for m in MODALITIES for suffix in ("token_id", "token_index")}
# Sub-configs of parts that never read the prompt (an omni model's speech decoder has its own ids).
_SKIP = ("talker", "code2wav", "token2wav")
# Placeholder strings by family, for a config that names none.
_TOKEN_NAMES = {
    "<|IMAGE|>": "image",
    "<|image_pad|>": "image",
    "<image_soft_token>": "image",
    "<image>": "image",
    "<|VIDEO|>": "video",
    "<|video_pad|>": "video",
    "<video>": "video",
    "<video_soft_token>": "video",
    "<|AUDIO|>": "audio",
    "<|audio_pad|>": "audio",
    "<audio_soft_token>": "audio",
    "<audio>": "audio",
}
# How an error names the engine a call ran on.
ENGINE_LABELS = {
    "vllm": "in-process vLLM",
    "openai": "server",
    "replicas": "replicas",
    "ray": "Ray",
    "transformers": "transformers",
}


def _from_config(config: Mapping, found: dict[int, str]) -> None:
    for key, value in config.items():
        if isinstance(value, Mapping):
            if not key.startswith(_SKIP):
                _from_config(value, found)
        elif key in _CONFIG_KEYS and isinstance(value, int) and not isinstance(value, bool):
            found.setdefault(value, _CONFIG_KEYS[key])


def placeholder_tokens(folder: pathlib.Path | str, tokenizer=None) -> dict[int, str]:
    """token id -> modality for the model in `folder`: its config's placeholder ids, else
    (a config naming none) the tokenizer's placeholder tokens by their family names."""
    found: dict[int, str] = {}
    config = pathlib.Path(folder) / "config.json"
    if config.is_file():
        _from_config(json.loads(config.read_text(encoding="utf-8")), found)
    if found or tokenizer is None:
        return found
    vocab = tokenizer.get_vocab()
    return {vocab[name]: modality for name, modality in _TOKEN_NAMES.items() if name in vocab}


def count(ids: Iterable[int], placeholders: Mapping[int, str]) -> dict[str, int]:
    """Prompt tokens per modality among `ids`: every modality the model has a placeholder for,
    zeros included (a modality without one is not counted, so it is never a false zero)."""
    known = set(placeholders.values())
    out = {m: 0 for m in MODALITIES if m in known}
    for t in ids:
        m = placeholders.get(int(t))
        if m is not None:
            out[m] += 1
    return out


def unreached(
    request,
    reached: Mapping[str, int] | None,
    model: str,
    engine: str,
    *,
    video_as_images: bool = False,
) -> str | None:
    """The error of a call whose cited modality arrived as zero tokens (None when each arrived,
    or when the count is unknown). A clip sent as separate frames (`video_as_images`) arrives
    as image tokens. A video part carrying its audio (Qwen-Omni's audio in video) would count
    its audio as audio; the protocol cites sound as audio parts, so none is sent that way."""
    if reached is None:
        return None
    cited = list(dict.fromkeys(m.modality for m in request.media))
    for modality in cited:
        arrives_as = ("video", "image") if modality == "video" and video_as_images else (modality,)
        if not any(m in reached for m in arrives_as):
            continue  # the model has no placeholder known for it: not counted, not zero
        if sum(reached.get(m, 0) for m in arrives_as) == 0:
            where = ENGINE_LABELS.get(engine, engine)
            return f"{modality} cited, 0 {modality} tokens reached {model} on the {where} engine"
    return None


def prompt_print(ids: Iterable[int] | None, bos_id: int | None) -> dict:
    """`Result` fields that say which prompt ran: `prompt_digest`, the sha256 of the prompt
    token ids as the runtime built them (placeholders expanded), comparable across routes; and
    `bos_count`, how many of them are the tokenizer's BOS (None where it has none). Empty where
    the ids are unknown."""
    if ids is None:
        return {}
    ids = [int(t) for t in ids]
    blob = ",".join(map(str, ids)).encode()
    return {
        "prompt_digest": hashlib.sha256(blob).hexdigest(),
        "bos_count": None if bos_id is None else ids.count(int(bos_id)),
    }
