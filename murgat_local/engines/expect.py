"""The placeholder tokens each cited part should place in the prompt, from the model's own
processor: the other half of the per-citation reach check (`reach.arrivals`).

A part is measured by the processor itself, not by a formula per family: the part alone in a
message rendered by the model's chat template, through its processor (as the transformers engine
feeds a whole request), and its modality's placeholder tokens counted in the ids that come back.
So it holds for any family whose processor expands its placeholders (Whisper frames to audio
tokens, a grid of patches to tokens after merging, Gemma 3's fixed tokens per image). The count
of a part depends on its shape alone, so it is measured once per shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..media.parts import AudioPart, ImagePart, MediaPart, VideoPart
from .base import Request, build_messages
from .presets import Preset
from .reach import count
from .render import ChatRenderer, processor_inputs

# Shapes measured per engine before the oldest are forgotten (each is a few ints).
_KEEP = 4096


def shape_key(part: MediaPart) -> tuple:
    """What a part's token count can depend on."""
    if isinstance(part, ImagePart):
        return ("image", part.pixels.shape)
    if isinstance(part, VideoPart):
        return ("video", part.frames.shape, round(float(part.fps), 4))
    if isinstance(part, AudioPart):
        return ("audio", part.waveform.shape, part.sample_rate)
    raise TypeError(f"not a cut media part: {type(part).__name__}")


class PartTokens:
    """Expected placeholder tokens per part for one model, measured with its processor (the
    engine's renderer, loaded once per model folder) and kept per shape."""

    def __init__(
        self, preset: Preset, renderer: ChatRenderer | None, placeholders: Mapping[int, str] | None
    ):
        self.preset = preset
        self.renderer = renderer
        self.placeholders = dict(placeholders or {})
        self._known: dict[tuple, int] = {}

    def unknown(self) -> str | None:
        """Why no part can be measured for this model (None: they can)."""
        if self.renderer is None or self.renderer.processor is None:
            return "the model's processor is not readable here"
        if not self.placeholders:
            return "the model's placeholder tokens are not known"
        return None

    def piece(self, part: MediaPart) -> int:
        """Placeholder tokens of the part's own modality the processor places for it."""
        key = shape_key(part)
        if key not in self._known:
            assert self.renderer is not None
            messages, media = build_messages(
                Request("x", media=(part,)), self.preset.quirks, text_only_strings=False
            )
            ids = processor_inputs(self.renderer, messages, media)["input_ids"][0].tolist()
            if len(self._known) >= _KEEP:
                self._known.clear()
            self._known[key] = count(ids, self.placeholders).get(part.modality, 0)
        return self._known[key]

    def expected(
        self, sent: Request, blocks: Sequence[int] | None = None
    ) -> list[tuple[str, int]] | str:
        """(modality, tokens) for each part the request asked for, in order: the sum over the
        parts `sent` holds for it (`blocks`: how many each became; one each when None); or the
        reason they cannot be known."""
        why = self.unknown()
        if why is not None:
            return why
        blocks = tuple(blocks) if blocks is not None else (1,) * len(sent.media)
        if sum(blocks) != len(sent.media):
            return "the parts sent do not match the parts asked for"
        out: list[tuple[str, int]] = []
        at = 0
        for n in blocks:
            pieces = sent.media[at : at + n]
            at += n
            modalities = {p.modality for p in pieces}
            if len(modalities) != 1:
                return "a cited part was sent as parts of several kinds"
            (modality,) = modalities
            try:
                tokens = sum(self.piece(p) for p in pieces)
            except Exception as e:  # a part the processor cannot take: the engine will say so
                return f"the model's processor could not measure a part ({type(e).__name__}: {e})"
            if tokens <= 0:
                return (
                    f"the model's processor places no {modality} placeholder tokens for a "
                    f"{modality} part (its chat template has no placeholder for it?)"
                )
            out.append((modality, tokens))
        return out
