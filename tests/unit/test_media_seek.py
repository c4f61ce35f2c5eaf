"""A long video's audio is cut by seeking to the window, not by decoding the track from the start,
and what comes out is what the whole-track cut gives for the same span.

Real PyAV and decord on a real 12-minute file made with ffmpeg: 32x32 at 1 fps whose grey level
steps every minute, and a tone whose pitch and loudness step every minute (22.05 kHz AAC, so the
resampler's grids meet only every 441 native samples)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tracemalloc

import numpy as np
import pytest

from murgat_local.media.segments import SegmentCutter, SegmentOptions
from murgat_local.sample.media import dominant_tone
from murgat_local.text.citations import parse_citations

MINUTES = 12
RATE = 22050


def pitch(minute: int) -> float:
    return 200.0 + 50.0 * minute


def loudness(minute: int) -> float:
    return 0.1 + 0.05 * (minute % 4)


def grey(minute: int) -> float:
    """The RGB level of minute `minute`'s frames (written as limited-range luma 16 + 18 * minute)."""
    return 18 * minute * 255 / 219


def cite(text):
    (c,) = parse_citations(f"x ({text}).")
    return c


@pytest.fixture(scope="module")
def long_root(tmp_path_factory):
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        pytest.fail("ffmpeg is missing: run scripts/setup.sh first")
    root = tmp_path_factory.mktemp("long")
    seconds = MINUTES * 60
    video = f"color=c=black:s=32x32:r=1:d={seconds},format=yuv420p,geq=lum='16+18*floor(T/60)':cb=128:cr=128"
    tone = f"aevalsrc='(0.1+0.05*mod(floor(t/60),4))*sin(2*PI*(200+50*floor(t/60))*t)':s={RATE}:d={seconds}"
    # -aac_pns 0: no perceptual noise substitution, whose noise depends on where decoding began
    # (with it the two cuts still agree, to ~1e-4 near the tone steps, not to float rounding).
    subprocess.run(
        [
            ffmpeg,
            "-y",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            video,
            "-f",
            "lavfi",
            "-i",
            tone,
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "10",
            "-c:a",
            "aac",
            "-aac_pns",
            "0",
            "-b:a",
            "32k",
            "-shortest",
            str(root / "long.mp4"),
        ],
        check=True,
    )
    return root


@pytest.fixture
def seeking(long_root):
    c = SegmentCutter(long_root)
    yield c
    c.close()


@pytest.fixture(scope="module")
def whole_track(long_root):
    """The same file cut the old way: the whole track decoded once."""
    c = SegmentCutter(long_root, SegmentOptions(audio_seek_after=float("inf")))
    yield c
    c.close()


SPANS = [
    "audio, 0:00-0:02",
    "audio, 0:05",
    "audio, 0:59.5-1:00.5",
    "audio, 5:00-5:03",
    "audio, 7:41.37-7:42.9",
    "audio, 11:58-11:59",
    "audio, 11:59.9-12:00",
]


@pytest.mark.parametrize("span", SPANS)
def test_a_seeking_cut_equals_the_whole_track_cut(seeking, whole_track, span):
    ref = seeking.source("long")
    assert ref.info.duration > 600
    assert (
        seeking._open(ref).seeks_audio
        and not whole_track._open(whole_track.source("long")).seeks_audio
    )
    got = seeking.cut(ref, cite(span)).waveform
    want = whole_track.cut(whole_track.source("long"), cite(span)).waveform
    assert got.dtype == np.float32 and got.shape == want.shape
    assert float(np.abs(want).max()) > 0.05
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("minute", [0, 6, 11])
def test_a_late_citation_hears_that_minute_s_tone(seeking, minute):
    ref = seeking.source("long")
    wave = seeking.cut(ref, cite(f"audio, {minute}:30-{minute}:32")).waveform
    assert len(wave) == 32000
    assert dominant_tone(wave) == pytest.approx(pitch(minute), abs=5)
    rms = float(np.sqrt(np.mean(wave**2)))
    assert rms == pytest.approx(loudness(minute) / np.sqrt(2), rel=0.1)


def test_a_window_past_the_end_is_silence_there(seeking, whole_track):
    ref = seeking.source("long")
    end = ref.info.duration
    # 12:00-12:01 lies within the duration tolerance; only its first moments have samples
    c = cite("audio, 11:59.5-12:00.5")
    part = seeking._open(ref).audio_between(c.start, c.end)
    assert len(part) == 16000
    inside = int(round((end - 719.5) * 16000))
    assert float(np.abs(part[: inside - 200]).max()) > 0.1
    assert not part[inside + 200 :].any()
    want = whole_track._open(whole_track.source("long")).audio_between(c.start, c.end)
    np.testing.assert_allclose(part, want, rtol=0, atol=1e-5)
    # wholly past the end: silence of the asked length
    assert not seeking._open(ref).audio_between(end + 5, end + 6).any()


def test_seeking_holds_no_decoded_track(seeking):
    ref = seeking.source("long")
    seeking.cut(ref, cite("audio, 0:03"))  # imports and the track's first frame, once
    tracemalloc.start()
    try:
        part = seeking.cut(ref, cite("audio, 11:30-11:32"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seeking.audio_bytes == 0
    # the window, its pads and one native-rate stretch: well under 1 MB. The whole track is
    # 46 MB at 16 kHz, after 64 MB at its own rate.
    assert peak < 1 << 20, peak
    assert part.waveform.nbytes == 2 * 16000 * 4


def test_the_seeking_cut_has_its_own_key_and_short_files_keep_theirs(
    seeking, whole_track, media_root
):
    c = cite("audio, 11:30-11:32")
    long_key = seeking.segment_key(seeking.source("long"), c)
    assert long_key != whole_track.segment_key(whole_track.source("long"), c)
    assert long_key[-2:] == ("cut", "seek")
    short = SegmentCutter(media_root)
    cheaper = SegmentCutter(media_root, dataclasses.replace(SegmentOptions(), audio_seek_after=0.0))
    a = cite("audio, 0:02")
    assert short.segment_key(short.source("colors"), a)[-4:] == ("sr", 16000, "point_window", 1.0)
    assert cheaper.segment_key(cheaper.source("colors"), a)[-2:] == ("cut", "seek")


def test_the_seeking_path_on_the_sample_files(media_root):
    """The sample files (44.1 kHz AAC with noise substitution on, one with its audio 0.5 s
    late), every one cut by seeking. A window whose pad reaches the track's start decodes from
    there, exactly as the whole track does; a later one differs only by the substituted noise,
    which the decoder draws from a generator whose state depends on where decoding began."""
    whole = SegmentCutter(media_root)
    seek = SegmentCutter(media_root, SegmentOptions(audio_seek_after=0.0))
    for video, span, atol in [
        ("colors", "audio, 0:00-0:01", 0),
        ("late_audio", "audio, 0:00-0:01", 0),
        ("speech", "audio, 0:01-0:03", 0),
        ("colors", "audio, 0:03-0:05", 5e-3),
        ("colors", "audio, 0:07.5-0:08", 5e-3),
        ("late_audio", "audio, 0:03.6-0:04.4", 5e-3),
    ]:
        got = seek.cut(seek.source(video), cite(span)).waveform
        want = whole.cut(whole.source(video), cite(span)).waveform
        np.testing.assert_allclose(got, want, rtol=0, atol=atol, err_msg=f"{video} {span}")
    # the same window cut again, by another cutter: the very same samples
    again = SegmentCutter(media_root, SegmentOptions(audio_seek_after=0.0))
    c = cite("audio, 0:03-0:05")
    assert np.array_equal(
        again.cut(again.source("colors"), c).waveform, seek.cut(seek.source("colors"), c).waveform
    )
    for cutter in (whole, seek, again):
        cutter.close()


@pytest.mark.parametrize("minute", [1, 7, 10])
def test_decord_shows_the_late_frame(seeking, minute):
    ref = seeking.source("long")
    frame = seeking.cut(ref, cite(f"visual, {minute}:40")).pixels
    assert frame.shape == (32, 32, 3)
    assert float(frame.mean()) == pytest.approx(grey(minute), abs=4)
    clip = seeking.cut(ref, cite(f"visual, {minute}:58-{minute + 1}:01")).frames
    levels = [round(float(f.mean())) for f in clip]
    assert levels[0] == pytest.approx(grey(minute), abs=4)
    assert levels[-1] == pytest.approx(grey(minute + 1), abs=4)
