"""Synthetic videos with known content, built offline with PyAV (and espeak-ng for speech).

`colors.mp4`: second k shows COLORS[k] full-frame and plays a sine at TONES[k] Hz. Every cited
segment's true content is therefore known: the tests check that a cut segment holds the cited
colour and tone. The other files are the edge cases the scorer must survive.
"""

from __future__ import annotations

import fractions
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

COLORS = [
    ("red", (220, 30, 30)),
    ("green", (30, 200, 60)),
    ("blue", (30, 60, 220)),
    ("yellow", (230, 220, 40)),
    ("cyan", (40, 210, 220)),
    ("magenta", (210, 40, 200)),
    ("white", (245, 245, 245)),
    ("black", (10, 10, 10)),
]
TONES = [300.0 + 100.0 * k for k in range(len(COLORS))]  # Hz, one per second
SPEECH = "the red ball rolls under the table"
VIDEO_FPS = 10
AUDIO_SR = 44100
SIZE = (320, 240)


def _write(
    path: pathlib.Path,
    seconds: int,
    *,
    audio: np.ndarray | None,
    audio_delay: float = 0.0,
    colors=COLORS,
) -> None:
    import av

    with av.open(str(path), "w") as out:
        v = out.add_stream("libx264", rate=VIDEO_FPS)
        v.width, v.height = SIZE
        v.pix_fmt = "yuv420p"
        v.options = {"preset": "ultrafast", "g": str(VIDEO_FPS)}
        a = None
        if audio is not None:
            a = out.add_stream("aac", rate=AUDIO_SR)
            a.layout = "mono"
        for i in range(seconds * VIDEO_FPS):
            _, rgb = colors[(i // VIDEO_FPS) % len(colors)]
            img = np.empty((SIZE[1], SIZE[0], 3), dtype=np.uint8)
            img[:] = rgb
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            frame.time_base = fractions.Fraction(1, VIDEO_FPS)
            for packet in v.encode(frame):
                out.mux(packet)
        for packet in v.encode():
            out.mux(packet)
        if a is not None and audio is not None:
            offset = int(round(audio_delay * AUDIO_SR))
            block = 1024
            for s in range(0, len(audio), block):
                chunk = audio[s : s + block].astype(np.float32)[None, :]
                sound = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="mono")
                sound.sample_rate = AUDIO_SR
                sound.pts = offset + s
                sound.time_base = fractions.Fraction(1, AUDIO_SR)
                for packet in a.encode(sound):
                    out.mux(packet)
            for packet in a.encode():
                out.mux(packet)


def tones(seconds: int) -> np.ndarray:
    t = np.arange(AUDIO_SR, dtype=np.float64) / AUDIO_SR
    parts = [0.4 * np.sin(2 * np.pi * TONES[k % len(TONES)] * t) for k in range(seconds)]
    return np.concatenate(parts).astype(np.float32)


def speech(text: str, seconds: int, at: float = 1.0) -> np.ndarray | None:
    """`text` spoken by espeak-ng starting at `at` s, over silence; None without espeak-ng."""
    exe = shutil.which("espeak-ng") or shutil.which("espeak")
    if exe is None:
        return None
    import librosa

    with tempfile.TemporaryDirectory() as tmp:
        wav = pathlib.Path(tmp) / "s.wav"
        subprocess.run([exe, "-w", str(wav), text], check=True, capture_output=True)
        voice, _ = librosa.load(str(wav), sr=AUDIO_SR, mono=True)
    track = np.zeros(seconds * AUDIO_SR, dtype=np.float32)
    start = int(at * AUDIO_SR)
    voice = voice[: len(track) - start]
    track[start : start + len(voice)] = 0.8 * voice / max(1e-6, float(np.abs(voice).max()))
    return track


def build_sample_media(out: pathlib.Path, seconds: int = len(COLORS)) -> dict[str, pathlib.Path]:
    """Write the sample videos into `out` (idempotent); returns name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, pathlib.Path] = {}

    def target(name: str) -> pathlib.Path | None:
        p = out / name
        made[name.rsplit(".", 1)[0]] = p
        return None if p.exists() and p.stat().st_size > 0 else p

    if p := target("colors.mp4"):
        _write(p, seconds, audio=tones(seconds))
    if p := target("silent.mp4"):
        _write(p, seconds, audio=None)
    if p := target("late_audio.mp4"):
        _write(p, seconds, audio=tones(seconds)[: int((seconds - 0.5) * AUDIO_SR)], audio_delay=0.5)
    spoken = speech(SPEECH, 4)
    if spoken is not None and (p := target("speech.mp4")):
        _write(p, 4, audio=spoken, colors=[("gray", (128, 128, 128))])
    if p := target("truncated.mp4"):
        data = (out / "colors.mp4").read_bytes()
        p.write_bytes(data[: len(data) // 3])
    return made


def dominant_color(frame: np.ndarray) -> str:
    """Name of the COLORS entry nearest to the frame's mean colour."""
    mean = frame.reshape(-1, 3).mean(axis=0)
    return min(COLORS, key=lambda c: float(np.sum((np.array(c[1]) - mean) ** 2)))[0]


def dominant_tone(wave: np.ndarray, sr: int = 16000) -> float:
    """Frequency (Hz) of the strongest spectral peak."""
    spectrum = np.abs(np.fft.rfft(wave * np.hanning(len(wave))))
    return float(np.fft.rfftfreq(len(wave), 1 / sr)[int(np.argmax(spectrum))])
