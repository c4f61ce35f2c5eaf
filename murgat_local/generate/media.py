"""What a responder sees and hears of a whole video, cut by the shared segment cutter.

- Omni models (video and audio): frames over the whole video at `fps` (an even count, at most
  `max_frames`, each at most `max_side`), sent as one clip with the rate it was really sampled
  at (the model's sense of time, and so its timestamps, depend on it), plus the whole
  soundtrack as a 16 kHz mono waveform.
- Image-only models: the same frames as separate images (at most the preset's image limit),
  each preceded by its time, and no audio: the record says the model heard nothing.
- Video models without audio (Qwen3-VL, Gemma 4 31B): the clip alone. Audio-only models
  (Qwen2-Audio): the soundtrack alone, in windows as long as the model hears whole; the record
  says the model saw nothing (`saw_video`).
- A video without an audio track is sent without audio, and that is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engines import ImagePart, MediaPart, Preset, VideoPart
from ..engines.limits import subsample
from ..media.segments import SegmentCutter, frame_times, sampled_rate
from ..media.source import MediaRef
from ..text.citations import AUDIO, VISUAL, Citation, format_time


def clock(t: float) -> str:
    """A frame's caption time, to the whole second."""
    return format_time(round(t))


@dataclass(frozen=True)
class ResponderPlan:
    """What will be sent, known without decoding anything: its cache identity, its captions,
    and the description that goes into the output row."""

    keys: tuple
    captions: tuple[str | None, ...]
    record: dict = field(default_factory=dict, hash=False, compare=False)


def _image_limit(preset: Preset) -> int | None:
    limit = (preset.engine_args.get("limit_mm_per_prompt") or {}).get("image")
    if isinstance(limit, dict):
        limit = limit.get("count")
    return int(limit) if limit is not None else None


def _whole(ref: MediaRef, modality: str) -> Citation:
    return Citation(modality, 0.0, ref.info.duration, f"(whole {modality})")


def plan_media(
    cutter: SegmentCutter, ref: MediaRef, preset: Preset, reserve_images: int = 0
) -> ResponderPlan:
    """What `preset` gets of the whole video. `reserve_images`: images the prompt carries beside
    the video (a question's attached image), which an image-only model's frames leave room for."""
    info = ref.info
    as_images = "video" not in preset.modalities
    sees = info.has_video and bool({"video", "image"} & preset.modalities)
    hears = "audio" in preset.modalities and info.has_audio
    keys: list = []
    captions: list[str | None] = []
    # What reached the model: the report counts citations of a modality it never received.
    record: dict = {
        "duration": round(info.duration, 3),
        "visual": None,
        "audio": None,
        "heard_audio": hears,
        "saw_video": sees,
    }
    if sees:
        times = frame_times(0.0, info.duration, cutter.opts.fps, cutter.opts.max_frames)
        fps = sampled_rate(0.0, info.duration, cutter.opts)
        if as_images:
            limit = _image_limit(preset)
            if limit is not None:
                limit = max(limit - reserve_images, 1)
            if limit is not None and len(times) > limit:
                times = [times[i] for i in _spread(len(times), limit)]
            captions.extend(f"[frame at {clock(t)}]" for t in times)
        else:
            captions.append(None)
        keys.append(
            cutter.segment_key(ref, _whole(ref, VISUAL))
            + (("as_images", len(times)) if as_images else ())
        )
        record["visual"] = {
            "frames": len(times),
            "as_images": as_images,
            "fps": round(fps, 6),
            "max_side": cutter.opts.max_side,
        }
    if hears:
        keys.append(cutter.segment_key(ref, _whole(ref, AUDIO)))
        captions.append(None)
        record["audio"] = {"seconds": round(info.duration, 3), "sample_rate": 16000}
    if not info.has_video:
        record["visual_missing"] = "the file has no video stream"
    elif not sees:
        record["visual_missing"] = f"model {preset.name} takes no images or video: it saw nothing"
    if not info.has_audio:
        record["audio_missing"] = "the video has no audio track"
    elif "audio" not in preset.modalities:
        record["audio_missing"] = f"model {preset.name} takes no audio: it heard nothing"
    return ResponderPlan(tuple(keys), tuple(captions) if any(captions) else (), record)


def _spread(n: int, k: int) -> list[int]:
    return [int(i) for i in np.round(np.linspace(0, n - 1, k)).astype(int)]


def cut_media(cutter: SegmentCutter, ref: MediaRef, plan: ResponderPlan) -> tuple[MediaPart, ...]:
    """The parts `plan` describes, cut from the video."""
    parts: list[MediaPart] = []
    visual = plan.record["visual"]
    if visual is not None:
        clip = cutter.cut(ref, _whole(ref, VISUAL))
        if isinstance(clip, ImagePart):  # a zero-length video is one frame
            clip = VideoPart(np.asarray(clip.pixels)[None], fps=cutter.opts.fps)
        assert isinstance(clip, VideoPart), "a visual cut is a video or one frame"
        if visual["as_images"]:
            if visual["frames"] < len(clip.frames):
                clip = subsample(clip, visual["frames"])
            parts.extend(ImagePart(f) for f in clip.frames)
        else:
            parts.append(clip)
    if plan.record["audio"] is not None:
        parts.append(cutter.cut(ref, _whole(ref, AUDIO)))
    return tuple(parts)


def media_note(record: dict) -> str:
    """A line telling the responder what it was given, when something is missing."""
    if record.get("visual") and record["visual"]["as_images"] and not record.get("heard_audio"):
        return "(The video is given as separate frames, each labelled with its time; there is no sound.)\n"
    if record.get("visual") is None:
        return "(Only the soundtrack is given; there are no pictures.)\n"
    if not record.get("heard_audio"):
        return "(There is no sound for this video.)\n"
    return ""
