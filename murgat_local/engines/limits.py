"""Fitting a request to what the model can take, before it reaches the engine.

vLLM refuses a whole batch when one prompt carries more media items than `limit_mm_per_prompt`
or more tokens than `max_model_len`. Each request is therefore checked first: its parts are
counted as the model will receive them (a video range sent as images counts its frames), and
its tokens are estimated with the model's own processor (each media part's token cost measured
once per shape). Where the protocol allows, a visual range keeps fewer, evenly spread frames,
and the result says so; a request that cannot fit is refused with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .base import REFUSED, Request, Result, build_messages, refusal
from .presets import Preset
from .render import ChatRenderer, adapt_media, adapted, audio_windows, processor_inputs

# The estimate is measured, not exact (a placeholder's surroundings differ slightly between a
# one-part probe and the full prompt): keep this many tokens in hand.
MARGIN = 16


@dataclass(frozen=True)
class Fitted:
    request: Request
    note: str | None = None  # what was changed to make it fit


def _limit(value) -> int:
    if isinstance(value, dict):
        return int(value.get("count", 999))
    return int(value)


def subsample(part: VideoPart, n: int) -> VideoPart:
    """`n` frames spread evenly over the clip (first and last kept), its rate adjusted so the
    model still knows how much time separates them."""
    t = len(part.frames)
    if n >= t:
        return part
    idx = np.round(np.linspace(0, t - 1, n)).astype(int)
    fps = part.fps * (n - 1) / (t - 1) if n > 1 and t > 1 else part.fps
    return VideoPart(part.frames[idx], fps=fps, start=part.start)


class RequestFitter:
    """Checks and, where allowed, reduces requests for one model and its engine arguments."""

    def __init__(self, preset: Preset, engine_args: dict, renderer: ChatRenderer):
        self.preset = preset
        self.renderer = renderer
        self.max_len = engine_args.get("max_model_len")
        self.limits = {
            k: _limit(v) for k, v in (engine_args.get("limit_mm_per_prompt") or {}).items()
        }
        self.as_images = preset.quirks.video_as_images
        self._part_cost: dict[tuple, int] = {}
        self._base: int | None = None

    # ------------------------------------------------------------------ counting

    def _min_frames(self) -> int:
        return 1 if self.as_images else 2  # Qwen's temporal patch takes frames in pairs

    def _counts(self, media: tuple[MediaPart, ...]) -> dict[str, int]:
        counts = {"image": 0, "video": 0, "audio": 0}
        for m in media:
            if isinstance(m, VideoPart):
                if self.as_images:
                    counts["image"] += len(m.frames)
                else:
                    counts["video"] += 1
            elif isinstance(m, AudioPart):
                counts["audio"] += audio_windows(m, self.preset.quirks.max_audio_seconds)
            else:
                counts[m.modality] += 1
        return counts

    def _fit_counts(self, request: Request) -> Request | str:
        counts = self._counts(request.media)
        for modality in ("video", "audio"):
            limit = self.limits.get(modality)
            if limit is not None and counts[modality] > limit:
                window = self.preset.quirks.max_audio_seconds if modality == "audio" else None
                how = (
                    f"; it hears at most {window:g} s whole, so longer audio is sent in windows"
                    if window
                    else ""
                )
                return (
                    f"{counts[modality]} {modality} items, more than this model takes in one prompt "
                    f"(limit_mm_per_prompt {modality}={limit}{how})"
                )
        limit = self.limits.get("image")
        if limit is None or counts["image"] <= limit:
            return request
        fixed = sum(1 for m in request.media if isinstance(m, ImagePart))
        ranges = [m for m in request.media if isinstance(m, VideoPart)]
        budget = limit - fixed
        if not ranges or budget < len(ranges):
            return (
                f"{counts['image']} images, more than this model takes in one prompt "
                f"(limit_mm_per_prompt image={limit}), even at one frame per cited range"
            )
        per = budget // len(ranges)
        media = tuple(subsample(m, per) if isinstance(m, VideoPart) else m for m in request.media)
        return dataclasses.replace(request, media=media)

    # ------------------------------------------------------------------ tokens

    def _tokens(self, request: Request) -> int:
        messages, media = build_messages(
            adapt_media(request, self.preset), self.preset.quirks, text_only_strings=False
        )
        return int(processor_inputs(self.renderer, messages, media)["input_ids"].shape[-1])

    def _cost(self, part: MediaPart) -> int:
        """Tokens one media part adds to a prompt, measured with the processor once per shape."""
        key: tuple
        if isinstance(part, ImagePart):
            key = ("image", part.pixels.shape)
        elif isinstance(part, VideoPart):
            key = ("video", part.frames.shape, round(part.fps, 4))
        else:
            key = ("audio", part.waveform.shape, part.sample_rate)
        if key not in self._part_cost:
            probe = Request("x", media=(part,))
            if self._base is None:
                self._base = self._tokens(Request("x"))
            self._part_cost[key] = self._tokens(probe) - self._base
        return self._part_cost[key]

    def estimate(self, request: Request) -> int:
        """Prompt tokens of `request`: its text rendered by the chat template, plus each media
        part's measured cost."""
        text = dataclasses.replace(request, media=(), captions=())
        messages, _ = build_messages(text, self.preset.quirks)
        n = int(processor_inputs(self.renderer, messages, [])["input_ids"].shape[-1])
        tok = self.renderer.tokenizer
        n += sum(len(tok(c, add_special_tokens=False)["input_ids"]) for c in request.captions if c)
        return n + sum(self._cost(m) for m in adapt_media(request, self.preset).media)

    # ------------------------------------------------------------------ fitting

    def fit(self, request: Request) -> Fitted | str:
        """The request as it will be sent (frames possibly reduced, with a note), or the reason
        it cannot be sent to this model."""
        before = sum(len(m.frames) for m in request.media if isinstance(m, VideoPart))
        fitted = self._fit_counts(request)
        if isinstance(fitted, str):
            return fitted
        why = "limit_mm_per_prompt" if fitted is not request else None
        if self.max_len:
            out = request.max_tokens() + self.preset.quirks.extra_output_tokens
            while (need := self.estimate(fitted) + out + MARGIN) > self.max_len:
                ranges = [m for m in fitted.media if isinstance(m, VideoPart)]
                longest = max((len(m.frames) for m in ranges), default=0)
                if longest <= self._min_frames():
                    return (
                        f"needs about {need - out - MARGIN} prompt tokens and {out} output tokens, "
                        f"more than max_model_len={self.max_len}"
                        + (" even at the fewest frames per range" if ranges else "")
                    )
                target = max(self._min_frames(), longest // 2)
                if not self.as_images:
                    target += target % 2
                fitted = dataclasses.replace(
                    fitted,
                    media=tuple(
                        subsample(m, target)
                        if isinstance(m, VideoPart) and len(m.frames) > target
                        else m
                        for m in fitted.media
                    ),
                )
                why = "max_model_len" if why is None else f"{why} and max_model_len"
        if why is None:
            return Fitted(request)
        after = sum(len(m.frames) for m in fitted.media if isinstance(m, VideoPart))
        return Fitted(fitted, f"frames reduced from {before} to {after} to fit {why}")


class Prepared(NamedTuple):
    """A request as it is sent, the fitter's note, and how many of its parts each part of the
    request asked for became (a clip sent as frames, audio sent in windows)."""

    request: Request
    note: str | None
    blocks: tuple[int, ...]


def prepare(request: Request, preset: Preset, fitter: RequestFitter | None) -> Prepared | Result:
    """A request as an engine of the vLLM runtime sends it, with the fitter's note, or the
    Result that stands in its place: refused for a modality the model cannot take, refused
    before the engine when it cannot be made to fit. Every such engine (in-process, served, on
    Ray) prepares requests here, so the same request gets the same treatment on each; `fitter`
    is None where the model's processor is not readable (a server on another box)."""
    lacking = sorted(m for m in preset.unavailable if m in request.modalities)
    if lacking:  # the model takes it, this engine cannot run it
        return Result(
            error=f"{REFUSED}: model {preset.name!r} cannot take {', '.join(lacking)} on this engine: "
            + "; ".join(preset.unavailable[m] for m in lacking)
        )
    reason = refusal(adapt_media(request, preset), preset.name, preset.modalities)
    if reason:  # a modality the model cannot take at all: nothing to fit
        return Result(error=reason)
    note = None
    if fitter is not None:
        fitted = fit_or_refuse(fitter, request)
        if isinstance(fitted, str):
            return Result(error=fitted)
        request, note = fitted.request, fitted.note
    sent, blocks = adapted(request, preset)
    return Prepared(sent, note, blocks)


def fit_or_refuse(fitter: RequestFitter, request: Request) -> Fitted | str:
    """`fitter.fit`, with a request that cannot fit (or cannot even be measured) as the error
    its result carries."""
    try:
        fitted = fitter.fit(request)
    except Exception as e:  # a request the processor cannot even measure
        fitted = f"could not measure the request ({type(e).__name__}: {e})"
    return f"{REFUSED} before the engine: {fitted}" if isinstance(fitted, str) else fitted
