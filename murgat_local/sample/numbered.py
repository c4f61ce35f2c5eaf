"""Media whose content says where it is, built with the ffmpeg CLI, and ffmpeg's own reading of it.

Every picture shows its frame number as a 4x3 grid of 16x16 blocks (bit b of the number is the
block at column b % 4, row b // 4: white for 1, black for 0), encoded losslessly, so a decoded
frame names itself with no OCR. The audio holds a tone burst of 0.1 s every second: burst k
starts BURST_AT s after second k of the audio stream and sounds at `burst_pitch(k)` Hz.

`ffmpeg_frames` and `ffmpeg_audio` are what ffmpeg decodes of such a file, placed on the file's
timeline (seconds from the container's start time): the reference the cutter is checked against
(tests/unit/test_media_exact.py) and timed against (scripts/bench.py).
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np

WIDTH, HEIGHT, BLOCK = 64, 48, 16
BITS = (WIDTH // BLOCK) * (HEIGHT // BLOCK)  # 12: frame numbers up to 4095
BURST_AT = 0.25
BURST_LEN = 0.1
BURST_AMP = 0.5


def burst_pitch(k: int) -> float:
    return 300.0 + 40.0 * k


def _ffmpeg() -> str:
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise RuntimeError("ffmpeg is missing: run scripts/setup.sh first")
    return exe


def _run(*args: str) -> bytes:
    return subprocess.run(
        [_ffmpeg(), "-y", "-v", "error", *args], check=True, capture_output=True
    ).stdout


def _pictures(rate: str, seconds: float) -> str:
    bit = f"floor(X/{BLOCK})+{WIDTH // BLOCK}*floor(Y/{BLOCK})"
    return (
        f"color=c=black:s={WIDTH}x{HEIGHT}:r={rate}:d={seconds},format=gray,"
        f"geq=lum='if(mod(floor(N/pow(2,{bit})),2),235,16)',format=yuv420p"
    )


def _bursts(rate: int, seconds: float, channels: int) -> str:
    k = "floor(t)"
    wave = f"{BURST_AMP}*sin(2*PI*(300+40*{k})*t)*between(t-{k},{BURST_AT},{BURST_AT + BURST_LEN})"
    return f"aevalsrc='{'|'.join([wave] * channels)}':s={rate}:d={seconds}"


_X264 = [
    "-fps_mode",
    "passthrough",
    "-c:v",
    "libx264",
    "-qp",
    "0",
    "-preset",
    "ultrafast",
    "-g",
    "24",
    "-sc_threshold",
    "0",
    "-bf",
    "2",
]


def _encode(
    path: pathlib.Path,
    rate: str = "30",
    seconds: float = 10,
    audio_rate: int | None = 48000,
    channels: int = 2,
    video_delay: float = 0.0,
    audio_delay: float = 0.0,
    extra=(),
) -> None:
    args = ["-f", "lavfi", "-i", _pictures(rate, seconds)]
    if audio_rate is None:
        _run(*args, *_X264, *extra, str(path))
        return
    if audio_delay:
        args += ["-itsoffset", str(audio_delay)]
    args += ["-f", "lavfi", "-i", _bursts(audio_rate, seconds, channels)]
    if video_delay:  # the video input again, delayed: the first input only gives the map its order
        args += ["-itsoffset", str(video_delay), "-f", "lavfi", "-i", _pictures(rate, seconds)]
    video = "2:v" if video_delay else "0:v"
    _run(
        *args, "-map", video, "-map", "1:a", *_X264, "-c:a", "aac", "-b:a", "96k", *extra, str(path)
    )


@dataclass(frozen=True)
class Recipe:
    """How one file is made: a base encode, or an ffmpeg stream copy of another file."""

    name: str
    encode: dict | None = None
    copy_of: str | None = None
    copy_args: tuple[str, ...] = ()


RECIPES = (
    Recipe("fps30", {"rate": "30", "audio_rate": 48000}),
    Recipe("fps25", {"rate": "25", "audio_rate": 44100}),
    Recipe("fps2997", {"rate": "30000/1001", "audio_rate": 48000}),
    # variable frame rate: frame N at 33 N + 11 (N mod 3) ms, so its gaps are 44, 44 and 11 ms
    Recipe(
        "vfr",
        {
            "rate": "30",
            "extra": (
                "-vf",
                "setpts=(N*0.033+mod(N\\,3)*0.011)/TB",
                "-enc_time_base",
                "1/1000",
                "-video_track_timescale",
                "1000",
            ),
        },
    ),
    Recipe("offset5", {"extra": ("-output_ts_offset", "5")}),
    Recipe("audio_late", {"audio_delay": 0.7}),
    Recipe("video_late", {"video_delay": 0.5}),
    Recipe("silent", {"audio_rate": None}),
    Recipe("short", {"seconds": 0.6}),
    Recipe("long", {"rate": "25", "seconds": 130, "audio_rate": 16000, "channels": 1}),
    # streams starting 2 s in: a stream copy that keeps the input's timestamps
    Recipe("copyts2", copy_of="fps30", copy_args=("-ss", "2", "-copyts")),
    # a stream copy from mid-GOP: the packets before 2.5 s are kept, flagged for discard
    Recipe("cut25", copy_of="fps30", copy_args=("-ss", "2.5")),
)


def build(out: pathlib.Path, names: tuple[str, ...] | None = None) -> dict[str, pathlib.Path]:
    """Write the files (all, or `names`) into `out`, each once; returns name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    by_name = {r.name: r for r in RECIPES}
    made: dict[str, pathlib.Path] = {}

    def make(name: str) -> pathlib.Path:
        path = out / f"{name}.mp4"
        if name not in made and not (path.exists() and path.stat().st_size):
            r = by_name[name]
            tmp = path.with_suffix(".part.mp4")
            if r.copy_of is not None:
                src = make(r.copy_of)
                seek, rest = list(r.copy_args[:2]), list(r.copy_args[2:])
                _run(*seek, *rest, "-i", str(src), "-c", "copy", str(tmp))
            else:
                _encode(tmp, **dict((r.encode or {}).items()))
            tmp.replace(path)
        made[name] = path
        return path

    for name in names or tuple(by_name):
        make(name)
    return made


def frame_number(rgb: np.ndarray) -> int:
    """The number a picture shows (HxWx3 uint8, at the size it was made)."""
    luma = rgb.astype(np.float32).mean(axis=2)
    n = 0
    for b in range(BITS):
        col, row = b % (WIDTH // BLOCK), b // (WIDTH // BLOCK)
        y, x = row * BLOCK + BLOCK // 2, col * BLOCK + BLOCK // 2
        if luma[y - 4 : y + 4, x - 4 : x + 4].mean() > 128:
            n |= 1 << b
    return n


def _probe(path: pathlib.Path, *args: str) -> str:
    exe = shutil.which("ffprobe")
    if exe is None:
        raise RuntimeError("ffprobe is missing: run scripts/setup.sh first")
    return subprocess.run(
        [exe, "-v", "error", *args, str(path)], check=True, capture_output=True, text=True
    ).stdout


def container_start(path: pathlib.Path) -> float:
    """The container's start time as ffprobe reports it (the earliest stream's start)."""
    text = _probe(path, "-show_entries", "format=start_time", "-of", "csv=p=0").strip()
    return float(text) if text not in ("", "N/A") else 0.0


@dataclass(frozen=True)
class Frames:
    """Every frame ffmpeg decodes: its start on the file's timeline and the number it shows."""

    starts: np.ndarray
    numbers: np.ndarray

    def shown_at(self, t: float) -> int:
        """The number on screen at `t` (the first frame's before it starts)."""
        i = int(np.searchsorted(self.starts, t + 1e-9, side="right")) - 1
        return int(self.numbers[max(i, 0)])

    def first_from(self, t: float) -> int:
        """The number of the first frame starting at or after `t` (the last frame's after all)."""
        i = int(np.searchsorted(self.starts, t - 1e-9, side="left"))
        return int(self.numbers[min(i, len(self.numbers) - 1)])

    def start_of(self, number: int) -> float:
        return float(self.starts[int(np.flatnonzero(self.numbers == number)[0])])


def ffmpeg_frames(path: pathlib.Path) -> Frames:
    """What ffmpeg decodes of the video stream: every frame's time and number, in order."""
    origin = container_start(path)
    times = [
        float(t)
        for t in _probe(
            path,
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=best_effort_timestamp_time",
            "-of",
            "csv=p=0",
        )
        .replace(",", " ")
        .split()
    ]
    raw = _run(
        "-i",
        str(path),
        "-map",
        "0:v:0",
        "-fps_mode",
        "passthrough",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-",
    )
    pictures = np.frombuffer(raw, np.uint8).reshape(-1, HEIGHT, WIDTH, 3)
    if len(pictures) != len(times):
        raise RuntimeError(
            f"{path.name}: ffmpeg decoded {len(pictures)} frames, ffprobe timed {len(times)}"
        )
    return Frames(np.asarray(times) - origin, np.asarray([frame_number(p) for p in pictures]))


def ffmpeg_audio(path: pathlib.Path, rate: int = 16000) -> np.ndarray:
    """The audio as ffmpeg decodes it, mono at `rate`, sample i at i / rate s on the file's
    timeline (silence before the track starts)."""
    origin = container_start(path)
    raw = _run(
        "-copyts",
        "-i",
        str(path),
        "-map",
        "0:a:0",
        "-ac",
        "1",
        "-af",
        f"aresample={rate}:async=1:first_pts=0",
        "-f",
        "s16le",
        "-",
    )
    wave = np.frombuffer(raw, np.int16).astype(np.float32) / 32768
    return wave[int(round(origin * rate)) :]


def burst_onsets(wave: np.ndarray, rate: int = 16000) -> list[tuple[int, float]]:
    """(sample index, pitch in Hz) of each burst that starts inside `wave` (after its first
    sample): where the signal first passes half the burst's amplitude after 0.2 s of quiet."""
    loud = np.flatnonzero(np.abs(wave) > BURST_AMP / 2)
    out = []
    quiet = int(0.2 * rate)
    last = -quiet - 1
    for i in loud:
        if (
            i - last > quiet
            and i >= quiet
            and np.abs(wave[i - quiet : i - quiet // 4]).max() < BURST_AMP / 4
        ):
            piece = wave[i : i + int(BURST_LEN * rate * 0.8)]
            spectrum = np.abs(np.fft.rfft(piece * np.hanning(len(piece))))
            out.append(
                (int(i), float(np.fft.rfftfreq(len(piece), 1 / rate)[int(np.argmax(spectrum))]))
            )
        last = i
    return out
