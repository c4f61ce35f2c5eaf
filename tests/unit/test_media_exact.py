"""The cutter checked from outside against ffmpeg: what `murgat cut` writes (what a judge receives)
against what ffmpeg decodes of the same files.

The files are built with the ffmpeg CLI (`murgat_local.sample.numbered`): every picture shows
its own frame number, the audio holds a tone burst of its own pitch every second. Each frame
written must be the one ffmpeg shows at its `t` (default mode), or the first frame at or after
it (`--compat reference`, the reference's `ffmpeg -ss t -frames:v 1`); each audio burst must
land within 1 ms of where ffmpeg places it.
"""

from __future__ import annotations

import json
import math
import pathlib
import wave

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.media.segments import SegmentCutter
from murgat_local.sample.numbered import (
    build,
    burst_onsets,
    ffmpeg_audio,
    ffmpeg_frames,
    frame_number,
)
from murgat_local.text.citations import parse_citations

RATE = 16000
EDGES = [
    "visual, 0:00",
    "visual, 0:00-0:01",
    "visual, 0:03.5",
    "visual, 0:04-0:05.5",
    "visual, 0:09-0:10",
    "visual, 0:10",
    "audio, 0:00-0:02",
    "audio, 0:03",
    "audio, 0:05.5-0:07",
    "audio, 0:08-0:10",
    "audio, 0:09.99",
]
CASES = {
    "fps30": EDGES + ["visual, 0:00.9996", "visual, 0:01", "visual, 0:06.01-0:07"],
    "fps25": EDGES,
    "fps2997": EDGES + ["visual, 0:05.005", "visual, 0:09.97"],
    "vfr": EDGES + ["visual, 0:00.077", "visual, 0:02.31-0:03"],
    "offset5": EDGES,
    "copyts2": [
        "visual, 0:00",
        "visual, 0:00.5-0:02",
        "visual, 0:08",
        "audio, 0:00-0:02",
        "audio, 0:07.9",
    ],
    "cut25": [
        "visual, 0:00",
        "visual, 0:00-0:01",
        "visual, 0:00.2",
        "visual, 0:07",
        "audio, 0:00-0:02",
        "audio, 0:07.4",
    ],
    "audio_late": EDGES + ["audio, 0:00.5-0:01.5"],
    "video_late": EDGES + ["visual, 0:00.2", "visual, 0:00.3-0:01"],
    "long": [
        "visual, 0:32.08",
        "visual, 2:09.6",
        "visual, 1:07.44",
        "visual, 0:45.12-0:46",
        "visual, 1:40.04",
        "visual, 2:09-2:10",
        "audio, 0:32.08-0:34",
        "audio, 2:09.6",
        "audio, 1:59.5-2:01",
    ],
}
PAST_END = {
    "silent": ["visual, 0:10", "visual, 0:11", "visual, 0:09-0:11"],
    "fps30": ["visual, 0:12", "audio, 0:12", "audio, 0:09-0:12"],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    return build(tmp_path_factory.mktemp("numbered"))


@pytest.fixture(scope="module")
def reference(files):
    """ffmpeg's frames and audio of each file, decoded once."""
    return {
        name: (ffmpeg_frames(p), ffmpeg_audio(p) if name not in ("silent",) else None)
        for name, p in files.items()
    }


def cut(media: pathlib.Path, citations: list[str], out: pathlib.Path, *extra: str) -> list[dict]:
    r = CliRunner().invoke(
        app, ["cut", str(media), *citations, "--out", str(out), "--json", *extra]
    )
    rows = json.loads(r.stdout)
    assert r.exit_code == (1 if any(row["error"] for row in rows) else 0), r.output
    return rows


def _wav(path: pathlib.Path) -> np.ndarray:
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, RATE)
        return np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768


def _cited(text: str) -> tuple[float, float]:
    (c,) = parse_citations(f"x ({text}).")
    return c.start, c.end


def check_frames(
    row: dict, out: pathlib.Path, frames, duration: float, reference_rule: bool
) -> None:
    start, end = _cited(row["citation"])
    assert row["frames"], row
    for f in row["frames"]:
        t = f["t"]
        if start == end:  # the cited time itself (to the ms), never the frame's own start
            assert t == pytest.approx(min(start, duration), abs=5e-4)
        else:  # a time inside the cited range
            assert start - 5e-4 <= t <= min(end, duration) + 5e-4
        shown = frame_number(np.asarray(Image.open(out / f["file"]).convert("RGB")))
        want = frames.first_from(t) if reference_rule else frames.shown_at(t)
        assert shown == want, (row["citation"], t, shown, want)


def check_audio(row: dict, out: pathlib.Path, ffmpeg_wave: np.ndarray, duration: float) -> None:
    a = row["audio"]
    start, end = _cited(row["citation"])
    got = _wav(out / a["file"])
    assert len(got) == a["samples"] == round((a["end"] - a["start"]) * RATE)
    assert -1e-9 <= a["start"] and a["end"] <= duration + 1e-6
    if start == end:  # a point: a 1 s window holding the cited instant, inside the file
        assert a["samples"] == RATE and a["start"] - 1e-6 <= min(start, duration) <= a["end"] + 1e-6
    else:
        assert a["start"] == pytest.approx(start, abs=1e-9)
    ours = [(a["start"] + i / RATE, pitch) for i, pitch in burst_onsets(got)]
    theirs = [(i / RATE, pitch) for i, pitch in burst_onsets(ffmpeg_wave)]
    inside = [t for t, _ in theirs if a["start"] + 0.21 <= t <= a["end"] - 0.01]
    assert len(ours) >= len(inside), (row["citation"], ours, inside)
    for t, pitch in ours:
        nearest = min(theirs, key=lambda th: abs(th[0] - t))
        assert abs(nearest[0] - t) < 1e-3, (row["citation"], t, nearest)
        assert abs(nearest[1] - pitch) < 15, (row["citation"], pitch, nearest)


@pytest.mark.parametrize("name", list(CASES))
def test_every_frame_and_burst_is_where_ffmpeg_puts_it(files, reference, tmp_path, name):
    frames, audio = reference[name]
    cutter = SegmentCutter(files[name].parent)
    duration = cutter.source(files[name].name).info.duration
    cutter.close()
    for mode in ((), ("--compat", "reference")):
        out = tmp_path / ("ref" if mode else "default")
        # the reference's grammar reads M:SS only: its decimal citations are not citations
        citations = [c for c in CASES[name] if not mode or "." not in c]
        rows = cut(files[name], citations, out, *mode)
        assert [r["citation"] for r in rows] == citations
        for row in rows:
            assert row["error"] is None, row
            if row["citation"].startswith("visual"):
                assert row["audio"] is None
                check_frames(row, out, frames, duration, reference_rule=bool(mode))
            else:
                assert row["frames"] == []
                check_audio(row, out, audio, duration)


def test_a_stream_copy_cut_starts_on_the_first_frame_ffmpeg_shows(files, tmp_path):
    (row,) = cut(files["cut25"], ["visual, 0:00"], tmp_path)
    assert (
        frame_number(np.asarray(Image.open(tmp_path / row["frames"][0]["file"]).convert("RGB")))
        == 75
    )


@pytest.mark.parametrize(
    "citation, number",
    [("visual, 0:32.08", 802), ("visual, 2:09.6", 3240), ("visual, 1:00.04", 1501)],
)
def test_frame_times_past_32_seconds_are_exact(files, tmp_path, citation, number):
    (row,) = cut(files["long"], [citation], tmp_path)
    assert (
        frame_number(np.asarray(Image.open(tmp_path / row["frames"][0]["file"]).convert("RGB")))
        == number
    )


def test_near_equal_times_are_one_quantized_time_for_key_and_cut(files):
    cutter = SegmentCutter(files["fps30"].parent)
    ref = cutter.source("fps30.mp4")

    def one(text):
        (c,) = parse_citations(f"x ({text}).")
        return cutter.cut(ref, c)

    first = frame_number(one("visual, 0:00.9996").pixels)
    assert frame_number(one("visual, 0:01").pixels) == first == 30  # 0.9996 s is 1.000 s, to the ms
    one("audio, 0:09.9999")
    assert len(one("audio, 0:10").waveform) == RATE
    cutter.close()


def test_a_point_at_the_end_gets_its_whole_window_inside_the_file(files, tmp_path):
    rows = cut(files["fps30"], ["audio, 0:09.99", "audio, 0:10"], tmp_path)
    for row in rows:
        a = row["audio"]
        assert (
            a["samples"] == RATE
            and a["end"] == pytest.approx(a["start"] + 1)
            and row["note"] is None
        )
    (short,) = cut(files["short"], ["audio, 0:00.3"], tmp_path)
    assert short["audio"]["start"] == 0 and short["audio"]["samples"] < RATE
    assert "shorter than" in short["note"]


def test_a_citation_past_the_last_nameable_second_is_refused(files, tmp_path):
    for name, citations in PAST_END.items():
        duration = SegmentCutter(files[name].parent).source(files[name].name).info.duration
        rows = cut(files[name], citations, tmp_path / name)
        for row in rows:
            start, end = _cited(row["citation"])
            if max(start, end) > math.ceil(duration - 1e-6):
                assert (
                    "beyond the media's duration" in row["error"]
                    and row["frames"] == []
                    and row["audio"] is None
                )
            else:
                assert row["error"] is None and (row["frames"] or row["audio"])
    rows = cut(files["silent"], ["visual, 0:11", "visual, 0:01"], tmp_path / "mixed")
    assert rows[0]["error"] and rows[1]["error"] is None  # the others go on


def test_cut_writes_unique_files_into_an_existing_folder_under_the_run_options(files, tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    config = tmp_path / "run.toml"
    config.write_text("[media]\nfps = 4.0\n")
    rows = cut(
        files["fps30"],
        ["visual, 0:01-0:02", "visual, 0:01-0:02", "audio, 0:02"],
        tmp_path,
        "--config",
        str(config),
    )
    names = [f["file"] for r in rows for f in r["frames"]] + [
        r["audio"]["file"] for r in rows if r["audio"]
    ]
    assert len(names) == len(set(names)) and (tmp_path / "keep.txt").exists()
    assert [f["t"] for f in rows[0]["frames"]] == [1.0, 1.25, 1.5, 1.75, 2.0, 2.0]
