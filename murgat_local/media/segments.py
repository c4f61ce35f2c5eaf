"""Cutting cited segments out of videos, in memory, each segment once.

visual point  -> one frame, sent as an image
visual range  -> frames at `fps` (2 by default) over the range, an even count of at least two
                 (which frame stands for a time: `SegmentOptions.frame_rule`)
audio         -> the 16 kHz mono waveform of the range (a point gets `audio_point_window` s,
                 from the point on, moved back inside the file where it would run past the end);
                 a file longer than `audio_seek_after` s has each window decoded by seeking to
                 it, a shorter one its whole track decoded once

Times are quantized to the millisecond once (`to_ms`): the cache key and the cut use the same
values. Segments are cached by (file content hash, modality, start, end, rate): the same
citation in a hundred responses is decoded once. Videos stay open in a small LRU.
"""

from __future__ import annotations

import math
import pathlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..text.citations import AUDIO, VISUAL, Citation, format_time
from .parts import AudioPart, ImagePart, MediaPart, VideoPart
from .source import (
    AUDIO_SEEK_AFTER,
    NEXT,
    SHOWN,
    TARGET_SR,
    MediaError,
    MediaInfo,
    MediaRef,
    VideoSource,
    content_hash,
    probe,
    resolve_video,
    seeks_audio,
)


@dataclass(frozen=True)
class SegmentOptions:
    fps: float = 2.0
    max_frames: int = 32
    max_side: int = 448
    audio_point_window: float = 1.0
    # Citations name whole seconds: the last moment one can name is the duration rounded up to
    # the second ("0:10" on a 10.0 s video, "0:11" on a 10.4 s one); this much more is allowed.
    duration_tolerance: float = 0.0
    # Audio of a file longer than this (seconds) is cut by seeking to each window rather than
    # from the whole track decoded once (which for an hour is ~230 MB at 16 kHz, and a citation
    # at 59:30 would decode all of it first).
    audio_seek_after: float = AUDIO_SEEK_AFTER
    # The frame for a cited time: SHOWN, the one on screen then; NEXT (`--compat reference`),
    # the first starting at or after it, as the reference's `ffmpeg -ss t -frames:v 1` takes.
    frame_rule: str = SHOWN

    def __post_init__(self):
        if self.frame_rule not in (SHOWN, NEXT):
            raise ValueError(f"frame_rule is {SHOWN!r} or {NEXT!r}, not {self.frame_rule!r}")


def to_ms(seconds: float) -> int:
    """A time quantized to the millisecond: the one value the cache key holds and the cut uses
    (a citation names nothing finer; `format_time` writes no more)."""
    return int(round(seconds * 1000))


def last_nameable(info: MediaInfo) -> int:
    """The last whole second a citation can name: the duration rounded up (to the ms first)."""
    return math.ceil(to_ms(info.duration) / 1000)


def check_citation(c: Citation, info: MediaInfo, opts: SegmentOptions) -> str | None:
    """Why this citation cannot be checked against this media (None when it can)."""
    if c.error:
        return c.error
    if c.modality == AUDIO and not info.has_audio:
        return "audio citation on a video with no audio track"
    if c.modality == VISUAL and not info.has_video:
        return "visual citation on a file with no video stream"
    limit = to_ms(last_nameable(info) + opts.duration_tolerance)
    last = f"the last moment a citation can name is {format_time(last_nameable(info))}"
    if c.start is not None and to_ms(c.start) > limit:
        return f"starts at {c.start:g}s, beyond the media's duration ({info.duration:.2f}s): {last}"
    if c.end is not None and to_ms(c.end) > limit:
        return f"ends at {c.end:g}s, beyond the media's duration ({info.duration:.2f}s): {last}"
    return None


def frame_times(start: float, end: float, fps: float, max_frames: int) -> list[float]:
    """Sample times over [start, end] at `fps`; an even count (Qwen's temporal patch is 2
    frames, the last is repeated as its processor does), at least 2, at most `max_frames`."""
    n = int(math.floor((end - start) * fps + 1e-9)) + 1
    if n > max_frames:
        n = max_frames - (max_frames % 2)
        step = (end - start) / (n - 1)
        return [start + k * step for k in range(n)]
    times = [start + k / fps for k in range(n)]
    if len(times) < 2:
        times.append(end)
    if len(times) % 2:
        times.append(times[-1])
    return times


def sampled_rate(start: float, end: float, opts: SegmentOptions) -> float:
    """The frame rate `frame_times` really samples [start, end] at: `fps`, or slower when the
    range needs more than `max_frames` frames. This is the rate the model must be told, or its
    sense of time (and its timestamps) is off."""
    n = int(math.floor((end - start) * opts.fps + 1e-9)) + 1
    if n <= opts.max_frames or end <= start:
        return opts.fps
    n = opts.max_frames - (opts.max_frames % 2)
    return (n - 1) / (end - start)


@dataclass(frozen=True)
class SegmentRef:
    """A cited segment as a plain, picklable value: the probed video (path, content digest,
    duration, streams), the citation (modality, start, end) and every option that shapes the
    cut. Another process cuts it where the file lives (`cut_ref`); nothing open travels."""

    source: MediaRef
    citation: Citation
    options: SegmentOptions

    @property
    def modality(self) -> str:
        """The kind of part it becomes: a visual point is one frame, a range a clip."""
        if self.citation.modality == AUDIO:
            return "audio"
        return "image" if self.citation.is_point else "video"


_worker_cutters: dict[SegmentOptions, SegmentCutter] = {}
_worker_lock = threading.Lock()


def cut_ref(ref: SegmentRef) -> MediaPart:
    """Cut a segment reference in this process, with one cutter per set of options kept for the
    process's life (a worker cuts many segments of the same videos)."""
    with _worker_lock:
        cutter = _worker_cutters.get(ref.options)
        if cutter is None:
            cutter = _worker_cutters[ref.options] = SegmentCutter(
                ref.source.path.parent, ref.options
            )
    return cutter.cut(ref.source, ref.citation)


class SegmentCutter:
    """Locates and probes videos, and cuts cited segments from them, caching each segment.

    Responses hold plain `MediaRef`s; decoders live only here, in an LRU of at most `max_open`
    open videos whose decoded audio tracks together stay under `max_audio_bytes`. Evicting a
    video closes it everywhere, so the bounds hold however many videos a chunk names.
    """

    def __init__(
        self,
        media_root: pathlib.Path,
        opts: SegmentOptions | None = None,
        *,
        max_open: int = 8,
        max_bytes: int = 512 << 20,
        max_audio_bytes: int = 1 << 30,
        allow_outside: tuple[pathlib.Path, ...] = (),
    ):
        # Resolved once: a media root that is itself a symlink works; paths under it are then
        # walked without ever leaving it (or the user's --allow-outside roots).
        self.media_root = pathlib.Path(media_root).resolve()
        self.allowed = tuple(pathlib.Path(p).resolve() for p in allow_outside)
        self.opts = opts or SegmentOptions()
        self._refs: dict[pathlib.Path, tuple[tuple, MediaRef]] = {}
        self._sources: OrderedDict[pathlib.Path, VideoSource] = OrderedDict()
        self._segments: OrderedDict[tuple, MediaPart] = OrderedDict()
        self._max_open = max_open
        self._max_bytes = max_bytes  # the segment cache is bounded by size, not count
        self._max_audio_bytes = max_audio_bytes  # decoded audio tracks of the open videos
        self._bytes = 0
        self._lock = threading.Lock()
        self.decoded = 0  # segments actually cut (cache misses)

    def source(self, video: str) -> MediaRef:
        """The video named by a response, located safely under the media root and probed (once
        per file version); raises MediaError when it cannot be used."""
        path = resolve_video(self.media_root, video, self.allowed)
        st = path.stat()
        version = (st.st_size, st.st_mtime_ns)
        with self._lock:
            known = self._refs.get(path)
        if known is not None and known[0] == version:
            return known[1]
        ref = MediaRef(path, content_hash(path), probe(path))
        with self._lock:
            self._refs[path] = (version, ref)
        return ref

    def _open(self, ref: MediaRef) -> VideoSource:
        with self._lock:
            src = self._sources.get(ref.path)
            if src is not None and src.hash == ref.hash:
                self._sources.move_to_end(ref.path)
                return src
            src = VideoSource(
                ref.path,
                max_side=self.opts.max_side,
                ref=ref,
                audio_seek_after=self.opts.audio_seek_after,
            )
            self._sources[ref.path] = src
            evicted = []
            while len(self._sources) > self._max_open:
                evicted.append(self._sources.popitem(last=False)[1])
        for old in evicted:
            old.close()
        return src

    @property
    def open_videos(self) -> int:
        return len(self._sources)

    @property
    def audio_bytes(self) -> int:
        """Bytes of decoded audio held by the open videos."""
        with self._lock:
            return sum(s.audio_bytes for s in self._sources.values())

    def segment_key(self, src: MediaRef, c: Citation) -> tuple:
        """Everything the cut depends on: the file's content, the span, and every option that
        shapes the cut (frame rate, frame cap, frame size, the audio window of a point, and for
        audio whether it is cut by seeking: its samples then differ from the whole track's by
        float rounding, or slightly more where the codec's noise substitution depends on where
        decoding began). Audio of a short file keeps the key it always had."""
        o = self.opts
        how: tuple
        if c.modality == VISUAL:
            how = (
                "fps",
                o.fps,
                "max_frames",
                o.max_frames,
                "max_side",
                o.max_side,
                "frame",
                o.frame_rule,
            )
        else:
            how = ("sr", TARGET_SR, "point_window", o.audio_point_window)
            if seeks_audio(src.info, o.audio_seek_after):
                how += ("cut", "seek")
        start, end = c.times
        return (src.hash, c.modality, to_ms(start) / 1000, to_ms(end) / 1000, *how)

    def cut(self, ref: MediaRef, c: Citation) -> MediaPart:
        """The cited segment; raises MediaError when it cannot be cut."""
        key = self.segment_key(ref, c)
        with self._lock:
            if key in self._segments:
                self._segments.move_to_end(key)
                return self._segments[key]
        src = self._open(ref)
        if c.modality == AUDIO and not src.seeks_audio and not src.audio_bytes:
            # Room first for the whole track this cut decodes: the bound then holds while it
            # decodes (the judge reads the open videos while the media thread cuts).
            self._bound_audio(keep=src, incoming=_track_bytes(ref.info))
        part = self._cut(src, c)
        if isinstance(part, AudioPart):
            self._bound_audio(keep=src)
        with self._lock:
            self.decoded += 1
            if key not in self._segments:
                self._segments[key] = part
                self._bytes += _nbytes(part)
            while self._bytes > self._max_bytes and len(self._segments) > 1:
                _, old = self._segments.popitem(last=False)
                self._bytes -= _nbytes(old)
        return part

    def _cut(self, src: VideoSource, c: Citation) -> MediaPart:
        # Everything below is derived from the times the key holds (whole ms), nothing finer.
        info = src.info
        end_of_file = to_ms(info.duration)
        c_start, c_end = c.times
        start, end = min(to_ms(c_start), end_of_file), min(to_ms(c_end), end_of_file)
        past = (
            f"{format_time(c_start)} is past the end ({info.duration:.2f}s): the end is used"
            if to_ms(c_start) > end_of_file
            else None
        )
        if c.modality == VISUAL:
            rule = self.opts.frame_rule
            if c.is_point:
                return ImagePart(src.frames_at([start], rule)[0], t=start / 1000, note=past)
            end = max(end, start)
            times = [
                to_ms(t)
                for t in frame_times(start / 1000, end / 1000, self.opts.fps, self.opts.max_frames)
            ]
            return VideoPart(
                src.frames_at(times, rule),
                fps=sampled_rate(start / 1000, end / 1000, self.opts),
                start=start / 1000,
                times=tuple(t / 1000 for t in times),
                note=past,
            )
        if c.modality == AUDIO:
            a, b, note = start / 1000, end / 1000, past
            if c.is_point:  # the window, moved back inside the file where it would run past it
                window = self.opts.audio_point_window
                a = max(min(a, info.duration - window), 0.0)
                b = min(a + window, info.duration)
                if info.duration < window:
                    note = f"the file ({info.duration:.2f}s) is shorter than the {window:g}s audio window"
            return AudioPart(src.audio_between(a, b), TARGET_SR, start=a, note=note)
        raise MediaError(f"cannot cut modality {c.modality!r}")

    def _bound_audio(self, keep: VideoSource, incoming: int = 0) -> None:
        """Release the oldest videos' decoded audio tracks beyond `max_audio_bytes`, less the
        `incoming` bytes of a track about to be decoded."""
        with self._lock:
            total = incoming + sum(s.audio_bytes for s in self._sources.values())
            for s in list(self._sources.values()):
                if total <= self._max_audio_bytes:
                    break
                if s is not keep and s.audio_bytes:
                    total -= s.audio_bytes
                    s.release_audio()

    def close(self) -> None:
        with self._lock:
            for s in self._sources.values():
                s.close()
            self._sources.clear()
            self._segments.clear()
            self._bytes = 0


def _track_bytes(info: MediaInfo) -> int:
    """About what a whole decoded track holds: 16 kHz mono float32 over the file's duration."""
    return int(math.ceil(info.duration * TARGET_SR)) * 4


def _nbytes(part: MediaPart) -> int:
    if isinstance(part, ImagePart):
        return part.pixels.nbytes
    if isinstance(part, VideoPart):
        return part.frames.nbytes
    return part.waveform.nbytes
