"""A video file before it is decoded: located safely, hashed, probed once, named as plain values.

`resolve_video` refuses a path that leaves the media root, `content_hash` and `probe` give what
a cache key and the cutter need, and `MediaRef` carries them to another process; `MediaError`
is a problem that belongs to one item. Apart from `source.py`, which decodes frames and audio
through PyAV, because most of the package only locates, names and checks a video and never
opens a decoder.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from ..digests import shared_memo
from .paths import PathRefused, resolve_within


class MediaError(Exception):
    """A media problem that belongs to one item (missing file, corrupt file, no audio...)."""


def resolve_video(
    media_root: pathlib.Path, video: str, allowed: tuple[pathlib.Path, ...] = ()
) -> pathlib.Path:
    """The video's real path under `media_root` (or an `allowed` root, all already resolved);
    refuses any path that leaves them before opening or stat'ing anything outside."""
    name = video if pathlib.PurePath(video).suffix else f"{video}.mp4"
    try:
        path = resolve_within(media_root, name, allowed)
    except PathRefused as e:
        raise MediaError(
            f"video path {video!r} escapes the media root {media_root} ({e}); refused"
        ) from None
    except FileNotFoundError:
        raise MediaError(f"video {video!r} not found under {media_root}") from None
    except OSError as e:
        raise MediaError(f"video {video!r} cannot be looked up ({e.strerror})") from None
    if not path.is_file():
        what = "a folder" if path.is_dir() else "not a regular file"
        raise MediaError(f"video {video!r} is {what}")
    if path.stat().st_size == 0:
        raise MediaError(f"video {video!r} is empty (0 bytes)")
    return path


def content_hash(path: pathlib.Path) -> str:
    """blake2b of the file's bytes, remembered by (path, size, mtime) across runs."""
    return shared_memo().file(path)


@dataclass(frozen=True)
class MediaInfo:
    duration: float
    has_video: bool
    has_audio: bool
    video_offset: float  # video stream start on the file timeline
    audio_offset: float
    fps: float | None
    width: int | None
    height: int | None


def probe(path: pathlib.Path) -> MediaInfo:
    import av

    try:
        with av.open(str(path)) as container:
            v = container.streams.video[0] if container.streams.video else None
            a = container.streams.audio[0] if container.streams.audio else None

            def start(s) -> float:
                if s is None or s.start_time is None:
                    return 0.0
                return float(s.start_time * s.time_base)

            def length(s) -> float:
                if s is None or s.duration is None:
                    return 0.0
                return float(s.duration * s.time_base)

            origin = min([start(s) for s in (v, a) if s is not None] or [0.0])
            duration = float(container.duration / 1_000_000) if container.duration else 0.0
            ends = [start(s) - origin + length(s) for s in (v, a) if s is not None]
            duration = max([duration] + ends)
            if v is None and a is None:
                raise MediaError(f"{path.name}: no video or audio stream")
            fps = float(v.average_rate) if v is not None and v.average_rate else None
            return MediaInfo(
                duration=duration,
                has_video=v is not None,
                has_audio=a is not None,
                video_offset=start(v) - origin if v is not None else 0.0,
                audio_offset=start(a) - origin if a is not None else 0.0,
                fps=fps,
                width=v.codec_context.width if v is not None else None,
                height=v.codec_context.height if v is not None else None,
            )
    except MediaError:
        raise
    except Exception as e:  # PyAV raises many types for damaged files
        raise MediaError(f"{path.name}: cannot read the file ({type(e).__name__}: {e})") from e


def seeks_audio(info: MediaInfo, seek_after: float) -> bool:
    """Whether a file's audio is cut by seeking (it is longer than `seek_after` seconds): chosen
    from the probed duration only, so the same file and options always take the same path."""
    return info.has_audio and info.duration > seek_after


@dataclass(frozen=True)
class MediaRef:
    """A located and probed video as plain values: what a response holds, and what a cache key
    or another process needs. It owns no open file; the cutter opens the file when it cuts."""

    path: pathlib.Path
    hash: str
    info: MediaInfo
