"""Benchmark cutting a citation late in a 1-hour video against one early in it, side by side.

A citation at 59:30 must be cut by seeking, not by decoding from the start: each cut (visual
point, visual range, audio range) at 0:05 and at 59:30 is timed with a fresh `SegmentCutter`
(cold: opening and probing the file included), a few times each, early and late interleaved;
the script prints the median times and the ratio late / early (target: well under 2), the
process's peak RSS (after the imports, then after the cuts), and for comparison the audio cut the way a short file's is (the whole
track decoded once, then sliced) at both times.

The video (160x90, 5 fps, a keyframe every 2 s, 44.1 kHz stereo AAC) is made with ffmpeg once
and kept in .local/bench/. Prints figures; asserts nothing.
Usage: python scripts/bench_media_seek.py [--reps 5] [--minutes 60]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import shutil
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CACHE = ROOT / ".local" / "bench"


def make_video(minutes: int) -> pathlib.Path:
    path = CACHE / f"long_{minutes}min.mp4"
    if path.exists():
        return path
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("ffmpeg is needed to make the benchmark video")
    CACHE.mkdir(parents=True, exist_ok=True)
    seconds = minutes * 60
    tmp = path.with_suffix(".part.mp4")
    t0 = time.perf_counter()
    subprocess.run(
        [
            ffmpeg,
            "-y",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            f"testsrc2=s=160x90:r=5:d={seconds}",
            "-f",
            "lavfi",
            "-i",
            f"sine=frequency=440:sample_rate=44100:duration={seconds}",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "10",
            "-c:a",
            "aac",
            "-b:a",
            "64k",
            "-ac",
            "2",
            "-shortest",
            str(tmp),
        ],
        check=True,
    )
    tmp.replace(path)
    print(
        json.dumps(
            {
                "made": str(path.relative_to(ROOT)),
                "seconds": round(time.perf_counter() - t0, 1),
                "mib": round(path.stat().st_size / 2**20, 1),
            }
        ),
        flush=True,
    )
    return path


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--minutes", type=int, default=60)
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    video = make_video(args.minutes)

    import librosa
    import numpy as np

    from murgat_local.media.segments import SegmentCutter, SegmentOptions
    from murgat_local.sample.media import dominant_tone
    from murgat_local.text.citations import parse_citations

    # librosa's lazy import and JIT, decord's and PyAV's imports, the file's content digest
    # (remembered by path, size and mtime): once per process, not per cut.
    librosa.resample(np.zeros(4410, np.float32), orig_sr=44100, target_sr=16000, res_type="soxr_hq")
    warm = SegmentCutter(video.parent)
    t0 = time.perf_counter()
    ref = warm.source(video.stem)
    first_source_s = time.perf_counter() - t0
    warm.close()

    end = args.minutes * 60
    early, late = 5, end - 30

    def clock(s: int) -> str:
        return f"{s // 60}:{s % 60:02d}"

    kinds = {
        "visual point": lambda t: f"visual, {clock(t)}",
        "visual range (4 s, 2 fps)": lambda t: f"visual, {clock(t)}-{clock(t + 4)}",
        "audio range (2 s)": lambda t: f"audio, {clock(t)}-{clock(t + 2)}",
    }

    def cold_cut(text: str, opts: SegmentOptions | None = None):
        (c,) = parse_citations(f"x ({text}).")
        cutter = SegmentCutter(video.parent, opts)
        t = time.perf_counter()
        part = cutter.cut(cutter.source(video.stem), c)
        dt = time.perf_counter() - t
        cutter.close()
        return dt, part

    results: dict = {
        "video": {
            "path": str(video.relative_to(ROOT)),
            "duration_s": round(ref.info.duration, 2),
            "size": f"{ref.info.width}x{ref.info.height}",
            "fps": ref.info.fps,
            "mib": round(video.stat().st_size / 2**20, 1),
            "first_source_s": round(first_source_s, 3),
        },
        "peak_rss_mib_after_imports": peak_rss_mib(),
        "early": clock(early),
        "late": clock(late),
        "reps": args.reps,
        "cuts": {},
    }
    for name, cite in kinds.items():
        times = {early: [], late: []}
        for _ in range(args.reps):
            for t in (early, late):
                dt, part = cold_cut(cite(t))
                times[t].append(dt)
        e, l = statistics.median(times[early]), statistics.median(times[late])
        results["cuts"][name] = {
            "early_ms": round(e * 1000, 1),
            "late_ms": round(l * 1000, 1),
            "late_over_early": round(l / e, 2),
        }
        print(json.dumps({name: results["cuts"][name]}), flush=True)
    _, part = cold_cut(kinds["audio range (2 s)"](late))
    results["late_audio_tone_hz"] = round(dominant_tone(part.waveform), 1)
    results["peak_rss_mib_seeking"] = peak_rss_mib()

    # The same audio cuts the way a short file's are: the whole track decoded once, then sliced.
    whole = SegmentOptions(audio_seek_after=float("inf"))
    cite = kinds["audio range (2 s)"]
    e, _ = cold_cut(cite(early), whole)
    l, _ = cold_cut(cite(late), whole)
    results["audio_whole_track"] = {
        "early_ms": round(e * 1000, 1),
        "late_ms": round(l * 1000, 1),
        "over_seeking_late": round(l * 1000 / results["cuts"]["audio range (2 s)"]["late_ms"], 1),
        "peak_rss_mib_after": peak_rss_mib(),
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
