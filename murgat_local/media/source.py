"""One video file decoded in memory (no subprocess); located and probed in `media_file.py`.

Times are seconds on the file's presentation timeline, 0 at the earliest stream's start, which
is what a viewer's player shows and what a citation names. A stream may start later than
another: frame times are kept as integer timestamps in the video stream's time base and placed
on that timeline exactly; the audio's offset is measured here and applied.
"""

from __future__ import annotations

import math
import pathlib
import threading
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .media_file import MediaError as MediaError
from .media_file import MediaInfo as MediaInfo
from .media_file import MediaRef as MediaRef
from .media_file import content_hash as content_hash
from .media_file import probe as probe
from .media_file import resolve_video as resolve_video
from .media_file import seeks_audio as seeks_audio

TARGET_SR = 16000
# Which frame stands for a cited time: the one on screen then (default mode), or the first one
# starting at or after it (`--compat reference`: the reference's `ffmpeg -ss t -frames:v 1`).
SHOWN = "shown"
NEXT = "next"
# Audio of a file longer than this (seconds) is cut by seeking to each window instead of from
# the whole track decoded once (see `VideoSource.audio_between`).
AUDIO_SEEK_AFTER = 600.0
# A window cut by seeking is resampled with this much track (seconds) on each side, so the
# resampler's edges fall outside the kept samples...
SEEK_PAD = 1.0
# ...and decoding starts this much earlier still, so the decoder has settled (AAC overlaps
# each frame with the one before) before the first sample that is resampled.
SEEK_WARMUP = 0.5


def _mono(frame) -> np.ndarray:
    arr = frame.to_ndarray().astype(np.float32)
    if frame.format.is_planar:
        return arr.mean(axis=0)
    return arr.reshape(-1, len(frame.layout.channels)).mean(axis=1)


class VideoSource:
    """A video opened once: frames and audio through PyAV. Frames are decoded by seeking; audio is the whole
    track decoded once, or for a file longer than `audio_seek_after` seconds, each window
    decoded by seeking to it."""

    def __init__(
        self,
        path: pathlib.Path,
        *,
        max_side: int = 448,
        ref: MediaRef | None = None,
        audio_seek_after: float = AUDIO_SEEK_AFTER,
    ):
        self.path = path
        self.info = ref.info if ref is not None else probe(path)
        self.hash = ref.hash if ref is not None else content_hash(path)
        self.max_side = max_side
        self.audio_seek_after = audio_seek_after
        self._video = None  # the open container, its frame table and where decoding stands:
        self._frame_pts: np.ndarray | None = None
        self._key_pts: np.ndarray | None = None
        self._origin = Fraction(0)
        self._cursor: tuple | None = None  # (the frame generator, the last pts it gave)
        self._audio: np.ndarray | None = None
        self._audio_head: tuple | None = None  # (first frame's pts, its time base, sample rate)
        self._lock = threading.Lock()

    # -------------------------------------------------------------- video
    # Frames are decoded by PyAV (libavcodec, as ffmpeg decodes them), and the frame table is the
    # video packets' integer timestamps in the stream's own time base, less the packets the
    # demuxer flags for discard (those before an edit list's start, as a stream-copy cut from
    # mid-GOP leaves them): the decoder never delivers those, so the table lists exactly the
    # frames it delivers. Times are compared in integers: a cited time (whole milliseconds) is
    # turned into the stream's units once, rounded the way the frame rule needs.

    def _open_video(self):
        if self._video is None:
            import av

            try:
                container = av.open(str(self.path))
                stream = container.streams.video[0]
                pts, keys = [], []
                for packet in container.demux(stream):
                    if packet.pts is None or packet.is_discard:
                        continue
                    pts.append(packet.pts)
                    if packet.is_keyframe:
                        keys.append(packet.pts)
                container.seek(0)
            except Exception as e:
                raise MediaError(f"{self.path.name}: cannot decode video ({e})") from e
            if not pts:
                container.close()
                raise MediaError(f"{self.path.name}: the video stream holds no frames")
            self._frame_pts = np.sort(np.asarray(pts, dtype=np.int64))
            self._key_pts = np.sort(np.asarray(keys or pts[:1], dtype=np.int64))
            # the timeline's 0, as `probe` places it: the earliest of the first video and audio
            # streams' starts, here exact
            first = [container.streams.video[0]] + list(container.streams.audio[:1])
            self._origin = min(
                (Fraction(s.start_time or 0) * s.time_base for s in first), default=Fraction(0)
            )
            self._video = container
            self._cursor = None
        return self._video

    def frame_index(self, t_ms: int, rule: str = SHOWN) -> int:
        """The frame for `t_ms` ms on the file's timeline: SHOWN, the one on screen then (the
        first frame before it starts); NEXT, the first starting at or after it (the last after
        the last one starts)."""
        with self._lock:
            container = self._open_video()
            return self._index(t_ms, rule, container.streams.video[0].time_base)

    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        """The sorted pts of the frames and of the keyframes, read when the video is opened."""
        if self._frame_pts is None or self._key_pts is None:
            raise RuntimeError(f"{self.path.name}: the video is not open")
        return self._frame_pts, self._key_pts

    def _index(self, t_ms: int, rule: str, tb: Fraction) -> int:
        units = (Fraction(t_ms, 1000) + self._origin) / tb
        frame_pts, _ = self._tables()
        n = len(frame_pts)
        if rule == NEXT:
            i = int(np.searchsorted(frame_pts, math.ceil(units), side="left"))
            return min(i, n - 1)
        i = int(np.searchsorted(frame_pts, math.floor(units), side="right")) - 1
        return max(i, 0)

    def frames_at(self, times_ms: Sequence[int], rule: str = SHOWN) -> np.ndarray:
        """RGB frames (N,H,W,3 uint8), one per time (whole ms on the file's timeline), chosen by
        `rule` (see `frame_index`)."""
        if not self.info.has_video:
            raise MediaError(f"{self.path.name}: no video stream")
        with self._lock:
            container = self._open_video()
            stream = container.streams.video[0]
            wanted = [self._index(int(t), rule, stream.time_base) for t in times_ms]
            try:
                pictures = self._decode(container, stream, sorted(set(wanted)))
            except MediaError:
                raise
            except Exception as e:  # PyAV raises many types for damaged files
                self._cursor = None
                raise MediaError(
                    f"{self.path.name}: frame decode failed near {times_ms[0] / 1000:.2f}s ({e})"
                ) from e
            return np.stack([pictures[i] for i in wanted])

    def _size(self) -> dict:
        w, h = self.info.width or 0, self.info.height or 0
        if w and h and max(w, h) > self.max_side:
            scale = self.max_side / max(w, h)
            return {
                "width": max(2, int(w * scale) // 2 * 2),
                "height": max(2, int(h * scale) // 2 * 2),
            }
        return {}

    def _decode(self, container, stream, indices: list[int]) -> dict[int, np.ndarray]:
        """The frames at `indices` (sorted table positions): decoding on from where the last
        call stopped when no keyframe lies between, else from a seek to the keyframe before."""
        out: dict[int, np.ndarray] = {}
        size = self._size()
        frame_pts, key_pts = self._tables()
        for i in indices:
            target = int(frame_pts[i])
            key = int(key_pts[max(int(np.searchsorted(key_pts, target, side="right")) - 1, 0)])
            cursor = self._cursor
            if cursor is None or not (key <= cursor[1] < target):
                container.seek(target, stream=stream, backward=True)
                cursor = self._cursor = (container.decode(stream), None)
            frames, last = cursor
            for frame in frames:
                if frame.pts is None:
                    raise MediaError(f"{self.path.name}: a video frame carries no timestamp")
                last = frame.pts
                if frame.pts >= target:  # the frame itself (or the next one delivered)
                    out[i] = frame.to_ndarray(format="rgb24", **size)
                    break
            else:
                self._cursor = None
                if i not in out:
                    raise MediaError(
                        f"{self.path.name}: the decoder delivered no frame at {float(target * stream.time_base):.3f}s"
                    )
                continue
            self._cursor = (frames, last)
        return out

    # -------------------------------------------------------------- audio

    def _decode_audio(self) -> np.ndarray:
        if self._audio is None:
            import av
            import librosa

            chunks, rate = [], None
            try:
                with av.open(str(self.path)) as container:
                    stream = container.streams.audio[0]
                    for frame in container.decode(stream):
                        chunks.append(_mono(frame))
                        rate = frame.sample_rate
            except Exception as e:
                if not chunks:
                    raise MediaError(f"{self.path.name}: cannot decode audio ({e})") from e
            if not chunks or rate is None:
                raise MediaError(f"{self.path.name}: the audio track holds no samples")
            wave = np.concatenate(chunks)
            if rate != TARGET_SR:
                wave = librosa.resample(wave, orig_sr=rate, target_sr=TARGET_SR, res_type="soxr_hq")
            self._audio = np.ascontiguousarray(wave, dtype=np.float32)
        return self._audio

    @property
    def seeks_audio(self) -> bool:
        return seeks_audio(self.info, self.audio_seek_after)

    def audio_between(self, start: float, end: float) -> np.ndarray:
        """16 kHz mono float32 for [start, end); silence where the track has no samples."""
        if not self.info.has_audio:
            raise MediaError(f"{self.path.name}: no audio track")
        off = self.info.audio_offset
        a = int(round((start - off) * TARGET_SR))
        b = int(round((end - off) * TARGET_SR))
        if self.seeks_audio:
            return self._audio_window(a, b)
        with self._lock:
            wave = self._decode_audio()
        out = np.zeros(max(b - a, 1), dtype=np.float32)
        lo, hi = max(a, 0), min(b, len(wave))
        if hi > lo:
            out[lo - a : hi - a] = wave[lo:hi]
        return out

    # A long track is never decoded whole: a window [a, b) of 16 kHz samples (indexed from the
    # track's first decoded sample, as `_decode_audio` indexes them) is cut by seeking to
    # SEEK_WARMUP + SEEK_PAD s before it, decoding until SEEK_PAD s after it, resampling that
    # stretch and keeping the window. The stretch starts on a sample where the native and the
    # 16 kHz grids meet, so its resampled samples fall exactly on the whole track's, and its
    # edges (the resampler's, the decoder's warm-up) lie in the pads. What comes out equals
    # the whole-track cut up to float rounding (1e-7 here), except where a codec adds noise
    # from a generator whose state depends on where decoding began (AAC's perceptual noise
    # substitution): there the noise differs slightly. Each cut opens its own decoder at a
    # position fixed by the window, so the same window always gives the same samples.

    def _head(self) -> tuple:
        """(pts, time base, sample rate) of the track's first decoded frame: sample 0."""
        with self._lock:
            if self._audio_head is None:
                import av

                try:
                    with av.open(str(self.path)) as container:
                        frame = next(container.decode(container.streams.audio[0]), None)
                except Exception as e:
                    raise MediaError(f"{self.path.name}: cannot decode audio ({e})") from e
                if frame is None:
                    raise MediaError(f"{self.path.name}: the audio track holds no samples")
                if frame.pts is None or frame.time_base is None:
                    raise MediaError(
                        f"{self.path.name}: the audio frames carry no timestamps; cannot seek"
                    )
                self._audio_head = (frame.pts, frame.time_base, frame.sample_rate)
            return self._audio_head

    def _native(self, n0: int, n1: int) -> np.ndarray:
        """The track's samples at its native rate over [n0, n1) (indices from its first sample),
        cut short where the track ends before n1."""
        import av

        pts0, tb, rate = self._head()
        begin = max(n0 - int(SEEK_WARMUP * rate), 0)
        out = np.zeros(n1 - n0, dtype=np.float32)
        end = n0  # one past the last sample found
        for seek in (True, False) if begin > 0 else (False,):
            try:
                with av.open(str(self.path)) as container:
                    stream = container.streams.audio[0]
                    if seek:
                        target = pts0 + begin * tb.denominator // (rate * tb.numerator)
                        container.seek(target, stream=stream, backward=True)
                    first = True
                    for frame in container.decode(stream):
                        pos = round((frame.pts - pts0) * tb * rate)
                        if first and pos > begin:
                            raise _LandedLate()
                        first = False
                        mono = _mono(frame)
                        lo, hi = max(pos, n0), min(pos + len(mono), n1)
                        if hi > lo:
                            out[lo - n0 : hi - n0] = mono[lo - pos : hi - pos]
                            end = max(end, hi)
                        if pos + len(mono) >= n1:
                            return out
            except Exception:  # PyAV raises many types for damaged files
                if seek and end == n0:
                    continue  # the seek failed or landed late: decode from the start instead
                # otherwise a damaged stretch ends the track here, as it does for `_decode_audio`
            return out[: end - n0]
        return out[: end - n0]

    def _audio_window(self, a: int, b: int) -> np.ndarray:
        out = np.zeros(max(b - a, 1), dtype=np.float32)
        b = a + len(out)
        _, _, rate = self._head()
        if b <= 0:
            return out  # before the track starts
        g = math.gcd(rate, TARGET_SR)
        per_native, per_target = rate // g, TARGET_SR // g  # the grids meet every this many samples
        pad = int(SEEK_PAD * TARGET_SR)
        k0 = max(a - pad, 0) // per_target * per_target
        k1 = -(-(b + pad) // per_target) * per_target
        native = self._native(k0 // per_target * per_native, k1 // per_target * per_native)
        if not len(native):
            return out  # past the track's end
        if rate != TARGET_SR:
            import librosa

            wave = librosa.resample(native, orig_sr=rate, target_sr=TARGET_SR, res_type="soxr_hq")
        else:
            wave = native
        lo, hi = max(a, k0), min(b, k0 + len(wave))
        if hi > lo:
            out[lo - a : hi - a] = wave[lo - k0 : hi - k0]
        return out

    @property
    def audio_bytes(self) -> int:
        """Bytes of the decoded whole track held (0 for a long track: windows hold nothing)."""
        return 0 if self._audio is None else self._audio.nbytes

    def release_audio(self) -> None:
        """Drop the decoded track; it is decoded again if needed."""
        with self._lock:
            self._audio = None

    def close(self) -> None:
        with self._lock:  # never while another thread is decoding from it
            if self._video is not None:
                self._video.close()
            self._video = None
            self._cursor = None
            self._audio = None


class _LandedLate(Exception):
    """A seek landed after the position asked for."""
