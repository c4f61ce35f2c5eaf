"""Cut media, as the judges receive it: frames, clips and waveforms in memory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ImagePart:
    """One frame, HxWx3 uint8 RGB: the one chosen for `t` s on the file's timeline."""

    pixels: np.ndarray
    t: float | None = None
    note: str | None = None
    modality = "image"


@dataclass(frozen=True, eq=False)
class VideoPart:
    """Frames TxHxWx3 uint8 RGB sampled at `fps`, starting at `start` seconds; `times` are the
    times on the file's timeline each frame was chosen for."""

    frames: np.ndarray
    fps: float
    start: float = 0.0
    times: tuple[float, ...] = ()
    note: str | None = None
    modality = "video"


@dataclass(frozen=True, eq=False)
class AudioPart:
    """Mono float32 waveform; its first sample at `start` s on the file's timeline (None when
    not cut from a file), after any window was moved."""

    waveform: np.ndarray
    sample_rate: int = 16000
    start: float | None = None
    note: str | None = None
    modality = "audio"


MediaPart = ImagePart | VideoPart | AudioPart
