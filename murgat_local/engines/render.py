"""Chat rendering shared by the engines: the model directory's own template, neutralized text."""

from __future__ import annotations

import dataclasses
import os
import pathlib

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .base import Request, neutralize
from .presets import Preset


def special_tokens_of(tokenizer) -> list[str]:
    """Every special-token string of a tokenizer (declared or added as special)."""
    tokens = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for added in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).values():
        content = getattr(added, "content", None)
        if content and getattr(added, "special", True):
            tokens.add(content)
    return sorted(t for t in tokens if t and not t.isspace())


def tokenizer_special_tokens(
    folder: str | os.PathLike, *, trust_remote_code: bool = False
) -> list[str]:
    """`special_tokens_of` the tokenizer saved in `folder` (a model folder, or a copy of just
    its tokenizer files: tokenizer.json, tokenizer_config.json, ...)."""
    from transformers import AutoTokenizer

    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise ValueError(f"--tokenizer {folder}: not a folder")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code)
    except Exception as e:  # transformers raises many kinds for an unusable folder
        raise ValueError(
            f"--tokenizer {folder}: no tokenizer could be loaded ({type(e).__name__}: {e})"
        ) from None
    return special_tokens_of(tokenizer)


def neutralization_of(preset: Preset, tokenizer: str | os.PathLike | None = None) -> dict:
    """Which special tokens an engine breaks in untrusted text, known without loading anything:
    the model's own when its folder is readable here (every in-process engine), else those of
    the tokenizer folder given for a served model, else only the generic shapes (`base.neutralize`),
    which miss a model's own kinds (Gemma's `<mask>`, `<unused0>`; SmolLM2's `<repo_name>`)."""
    if (preset.path / "config.json").is_file():
        return {"neutralization": "model", "source": str(preset.path)}
    if tokenizer is not None:
        return {"neutralization": "tokenizer", "source": str(pathlib.Path(tokenizer).resolve())}
    return {"neutralization": "generic"}


class ChatRenderer:
    """Renders chat messages with the model's own chat template (processor, else tokenizer)."""

    def __init__(self, path: pathlib.Path, preset: Preset, *, trust_remote_code: bool = False):
        from transformers import AutoProcessor, AutoTokenizer

        self.processor = None
        if preset.modalities != {"text"}:
            self.processor = AutoProcessor.from_pretrained(
                path, trust_remote_code=trust_remote_code
            )
            self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        else:
            self.tokenizer = AutoTokenizer.from_pretrained(
                path, trust_remote_code=trust_remote_code
            )
        self.special_tokens = special_tokens_of(self.tokenizer)

    def render(self, messages: list[dict]) -> str:
        """The prompt text exactly as the chat template writes it, its BOS included: to be
        tokenized *without* the tokenizer's special tokens (`prompt_ids`), as `vllm serve`'s chat
        route and transformers' `apply_chat_template` do. Tokenizing it with them would add a
        second BOS on the models whose tokenizer adds one (Gemma)."""
        safe = [self._neutralized(m) for m in messages]
        owner = self.processor if self.processor is not None else self.tokenizer
        return owner.apply_chat_template(safe, tokenize=False, add_generation_prompt=True)

    def prompt_ids(self, messages: list[dict]) -> list[int]:
        """The prompt's token ids, tokenized here once: what every route sends. vLLM's default
        for a text prompt differs by family (its Gemma 4 processor adds no special tokens, its
        Gemma 3 one does), so the in-process engines hand it these ids, never the text."""
        return list(self.tokenizer(self.render(messages), add_special_tokens=False)["input_ids"])

    def _neutralized(self, message: dict) -> dict:
        content = message["content"]
        if isinstance(content, str):
            return {**message, "content": neutralize(content, self.special_tokens)}
        parts = []
        for part in content:
            if part.get("type") == "text":
                part = {**part, "text": neutralize(part["text"], self.special_tokens)}
            parts.append(part)
        return {**message, "content": parts}


def audio_windows(part: AudioPart, seconds: float | None) -> int:
    """How many consecutive parts `part` is sent as, for a model that hears at most `seconds`."""
    if not seconds:
        return 1
    step = int(seconds * part.sample_rate)
    return max(1, -(-len(part.waveform) // step))


def _split_audio(request: Request, seconds: float | None) -> tuple[Request, list[int]]:
    """Audio longer than the model hears whole, as consecutive windows (nothing left out); and
    how many parts each part became."""
    pieces = [audio_windows(m, seconds) if isinstance(m, AudioPart) else 1 for m in request.media]
    if not seconds or all(n == 1 for n in pieces):
        return request, pieces
    media: list[MediaPart] = []
    captions: list[str | None] = []
    for i, m in enumerate(request.media):
        caption = request.captions[i] if request.captions else None
        n = pieces[i]
        if n == 1 or not isinstance(m, AudioPart):
            media.append(m)
        else:
            step = int(seconds * m.sample_rate)
            media.extend(
                AudioPart(m.waveform[k * step : (k + 1) * step], m.sample_rate) for k in range(n)
            )
        captions.extend([caption] + [None] * (n - 1))
    return dataclasses.replace(
        request, media=tuple(media), captions=tuple(captions) if request.captions else ()
    ), pieces


def adapted(request: Request, preset: Preset) -> tuple[Request, tuple[int, ...]]:
    """`adapt_media`'s request, and how many of its parts each part of `request` became (the
    per-citation reach check adds up a citation's windows or frames)."""
    request, pieces = _split_audio(request, preset.quirks.max_audio_seconds)
    if not preset.quirks.video_as_images or not any(
        isinstance(m, VideoPart) for m in request.media
    ):
        return request, tuple(pieces)
    media: list[MediaPart] = []
    captions: list[str | None] = []
    frames: list[int] = []
    for i, m in enumerate(request.media):
        caption = request.captions[i] if request.captions else None
        if isinstance(m, VideoPart):
            media.extend(ImagePart(frame) for frame in m.frames)
            captions.extend([caption] + [None] * (len(m.frames) - 1))
            frames.append(len(m.frames))
        else:
            media.append(m)
            captions.append(caption)
            frames.append(1)
    # Audio windows are never video: the two expansions touch different parts.
    blocks, at = [], 0
    for n in pieces:
        blocks.append(sum(frames[at : at + n]))
        at += n
    return dataclasses.replace(
        request, media=tuple(media), captions=tuple(captions) if request.captions else ()
    ), tuple(blocks)


def adapt_media(request: Request, preset: Preset) -> Request:
    """Send a video range as separate frames to a model that takes images but no video, and
    audio longer than the model hears whole (`max_audio_seconds`) as consecutive windows."""
    return adapted(request, preset)[0]


def video_metadata(part: VideoPart) -> dict:
    """What the model's processor knows of a clip: its frames were sampled at `fps` and are all
    to be used (vLLM samples none when the metadata does not ask it to). Frame times count from
    the clip's start, as the model sees only the clip."""
    n = len(part.frames)
    return {
        "fps": float(part.fps),
        "duration": n / part.fps if part.fps else 0.0,
        "total_num_frames": n,
        "frames_indices": list(range(n)),
    }


def processor_inputs(renderer: ChatRenderer, messages: list[dict], media: list[MediaPart]):
    """The model's own processor applied to rendered messages and their media: token ids (and
    pixel/feature tensors) exactly as transformers would feed them to the model."""
    text = renderer.render(messages)
    if renderer.processor is None:
        return renderer.tokenizer(text, add_special_tokens=False, return_tensors="pt")
    kwargs: dict = {"text": [text], "add_special_tokens": False, "return_tensors": "pt"}
    images = [m.pixels for m in media if isinstance(m, ImagePart)]
    videos = [m for m in media if isinstance(m, VideoPart)]
    audios = [m.waveform for m in media if isinstance(m, AudioPart)]
    if images:
        kwargs["images"] = images
    if videos:
        kwargs["videos"] = [list(v.frames) for v in videos]
        kwargs["fps"] = videos[0].fps  # the processor takes one rate per call
        kwargs["do_sample_frames"] = False
        # Processors that stamp frames with their time (Gemma 4, Qwen3-VL) read it from here.
        kwargs["video_metadata"] = [video_metadata(v) for v in videos]
    if audios:
        kwargs["audio"] = audios
        kwargs["sampling_rate"] = 16000
    return renderer.processor(**kwargs)
