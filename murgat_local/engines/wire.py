"""Requests as OpenAI-compatible chat messages, media inline and lossless.

The server applies the chat template itself, so the message structure is what reaches the
model: text parts are neutralized here (the server would turn a special-token string in a
response into a real control token), and each media part becomes the content part vLLM's
server decodes into exactly the array the in-process engine passes:

- an image: a PNG data URL (`image_url`), lossless;
- a video range: its sampled frames as a `video/jpeg` data URL, vLLM's frame-sequence form,
  each frame PNG-encoded (the server's image loader reads any format, so nothing is lost),
  with the sampling rate in `media_io_kwargs` and `mm_processor_kwargs`;
- audio: a 16 kHz mono wav of 32-bit floats (`input_audio`), the waveform bit for bit.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .base import Request, build_messages, decoding, neutralize
from .confidence import MAX_TOP_LOGPROBS, wants_p_yes


def png_base64(pixels: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8)).save(
        buf, format="PNG", compress_level=1
    )
    return base64.b64encode(buf.getvalue()).decode("ascii")


def wav_base64(waveform: np.ndarray, sample_rate: int) -> str:
    import soundfile

    buf = io.BytesIO()
    soundfile.write(
        buf, np.asarray(waveform, dtype=np.float32), sample_rate, format="WAV", subtype="FLOAT"
    )
    return base64.b64encode(buf.getvalue()).decode("ascii")


def media_content(part: MediaPart) -> dict:
    if isinstance(part, ImagePart):
        return {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + png_base64(part.pixels)},
        }
    if isinstance(part, VideoPart):
        frames = ",".join(png_base64(f) for f in part.frames)
        return {"type": "video_url", "video_url": {"url": "data:video/jpeg;base64," + frames}}
    if isinstance(part, AudioPart):
        return {
            "type": "input_audio",
            "input_audio": {"data": wav_base64(part.waveform, part.sample_rate), "format": "wav"},
        }
    raise TypeError(f"cannot send media of type {type(part).__name__}")


def chat_messages(request: Request, quirks, special_tokens: Sequence[str] = ()) -> list[dict]:
    """The request as chat messages: the same layout the in-process engines render (system
    turn or prefix, captions, media before or after the text), every text neutralized."""
    messages, media = build_messages(request, quirks)
    parts = iter(media)
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append({"role": m["role"], "content": neutralize(content, special_tokens)})
            continue
        wire = []
        for p in content:
            if p["type"] == "text":
                wire.append({"type": "text", "text": neutralize(p["text"], special_tokens)})
            else:
                wire.append(media_content(next(parts)))
        out.append({"role": m["role"], "content": wire})
    return out


def body(
    request: Request,
    quirks,
    model: str,
    temperature: float,
    special_tokens: Sequence[str] = (),
    extra_output_tokens: int = 0,
    label_ids: Sequence[int] | None = None,
    top_logprobs: int = MAX_TOP_LOGPROBS,
) -> dict:
    """The whole `/v1/chat/completions` body for one request. For a yes/no verdict: the
    log-probabilities of `label_ids` (the tokens that can decide it, `logprobs.LabelTokens`)
    where given, else of the `top_logprobs` best alternatives (counted from its grammar:
    `LabelTokens.top_logprobs`)."""
    data: dict = {
        "model": model,
        "messages": chat_messages(request, quirks, special_tokens),
        "max_tokens": request.max_tokens() + extra_output_tokens,
        "n": 1,
    }
    s = decoding(request, quirks)
    if s is None:  # a judge: the engine's decoding (as in-process: no per-request seed)
        data.update(temperature=temperature, top_p=1.0, top_k=-1)
    else:
        data.update(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k or -1, seed=s.seed)
    regex = request.constraint()
    if regex is not None:
        data["structured_outputs"] = {"regex": regex}
    if wants_p_yes(request.verdict):  # the alternatives at the deciding token (p_yes)
        if label_ids:
            data.update(logprobs=True, logprob_token_ids=list(label_ids))
        else:
            data.update(logprobs=True, top_logprobs=top_logprobs)
    videos = [m for m in request.media if isinstance(m, VideoPart)]
    if videos:
        # Every frame sent is a frame used (no resampling on the server), at the rate cut, which
        # reaches the processor as the in-process engine passes it. vLLM's server takes these
        # only with --trust-request-mm-kwargs (`murgat serve` sets it: the scorer, not the
        # response under evaluation, writes them).
        data["media_io_kwargs"] = {"video": {"num_frames": -1, "fps": videos[0].fps}}
        data["mm_processor_kwargs"] = {"fps": videos[0].fps}
    return data
