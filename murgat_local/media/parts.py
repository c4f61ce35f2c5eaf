"""Cut media, as the judges receive it: frames, clips and waveforms in memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np


@dataclass(frozen=True, eq=False)
class ImagePart:
    """One frame, HxWx3 uint8 RGB."""

    pixels: np.ndarray
    modality = "image"


@dataclass(frozen=True, eq=False)
class VideoPart:
    """Frames TxHxWx3 uint8 RGB sampled at `fps`, starting at `start` seconds."""

    frames: np.ndarray
    fps: float
    start: float = 0.0
    modality = "video"


@dataclass(frozen=True, eq=False)
class AudioPart:
    """Mono float32 waveform."""

    waveform: np.ndarray
    sample_rate: int = 16000
    modality = "audio"


MediaPart = Union[ImagePart, VideoPart, AudioPart]
