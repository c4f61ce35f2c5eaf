import numpy as np
import pytest

from murgat_local.media.parts import AudioPart, ImagePart, VideoPart
from murgat_local.media.segments import SegmentCutter, SegmentOptions, check_citation
from murgat_local.media.source import MediaError
from murgat_local.sample.media import COLORS, TONES, dominant_color, dominant_tone
from murgat_local.text.citations import parse_citations


def cite(text):
    (c,) = parse_citations(f"x ({text}).")
    return c


@pytest.fixture
def cutter(media_root):
    c = SegmentCutter(media_root)
    yield c
    c.close()


@pytest.mark.parametrize("second", [0, 2, 5, 7])
def test_point_citation_is_one_frame_of_the_cited_colour(cutter, second):
    src = cutter.source("colors")
    part = cutter.cut(src, cite(f"visual, 0:0{second}.5"))
    assert isinstance(part, ImagePart)
    assert dominant_color(part.pixels) == COLORS[second][0]


def test_range_citation_is_frames_at_two_fps(cutter):
    src = cutter.source("colors")
    part = cutter.cut(src, cite("visual, 0:01-0:03"))
    assert isinstance(part, VideoPart) and part.fps == 2.0
    assert part.frames.shape[0] % 2 == 0 and part.frames.shape[0] >= 4
    seen = [dominant_color(f) for f in part.frames]
    assert seen[0] == "green" and "blue" in seen and seen[-1] == "yellow"


@pytest.mark.parametrize("second", [1, 4, 6])
def test_audio_citation_holds_the_cited_tone(cutter, second):
    src = cutter.source("colors")
    part = cutter.cut(src, cite(f"audio, 0:0{second}-0:0{second + 1}"))
    assert isinstance(part, AudioPart) and part.sample_rate == 16000
    assert abs(len(part.waveform) - 16000) <= 1
    assert dominant_tone(part.waveform[2000:-2000]) == pytest.approx(TONES[second], abs=5)


def test_late_audio_is_aligned_on_the_file_timeline(cutter):
    src = cutter.source("late_audio")
    assert src.info.audio_offset == pytest.approx(0.5, abs=0.03)
    # before the audio starts: silence, not the first second's tone shifted forward
    head = cutter.cut(src, cite("audio, 0:00.0-0:00.4"))
    assert float(np.abs(head.waveform).max()) < 0.05
    # the track was written delayed by 0.5 s: tone k plays over [k + 0.5, k + 1.5)
    part = cutter.cut(src, cite("audio, 0:03.6-0:04.4"))
    assert dominant_tone(part.waveform[1000:-1000]) == pytest.approx(TONES[3], abs=5)
    part = cutter.cut(src, cite("audio, 0:03.0-0:03.4"))
    assert dominant_tone(part.waveform[1000:-1000]) == pytest.approx(TONES[2], abs=5)


def test_segments_are_cut_once(cutter):
    src = cutter.source("colors")
    a = cutter.cut(src, cite("visual, 0:02"))
    b = cutter.cut(src, cite("visual, 0:02"))
    assert a is b and cutter.decoded == 1


def test_citation_validity(cutter, media_root):
    opts = SegmentOptions()
    colors = cutter.source("colors").info
    silent = cutter.source("silent").info
    assert (
        check_citation(cite("visual, 0:08"), colors, opts) is None
    )  # the last second, by tolerance
    assert "beyond the media's duration" in check_citation(cite("visual, 0:30"), colors, opts)
    assert "beyond the media's duration" in check_citation(cite("audio, 0:05-0:20"), colors, opts)
    assert "no audio track" in check_citation(cite("audio, 0:01"), silent, opts)
    assert "seconds" in check_citation(cite("visual, 0:99"), colors, opts)


def test_bad_files_are_item_errors(cutter):
    with pytest.raises(MediaError, match="not found"):
        cutter.source("no_such_video")
    with pytest.raises(MediaError, match="escapes the media root"):
        cutter.source("../../etc/passwd")
    with pytest.raises(MediaError, match="escapes the media root"):
        cutter.source("/etc/hostname")
    with pytest.raises(MediaError, match="cannot read"):
        cutter.source("truncated")


def test_decoded_audio_is_bounded(media_root):
    cutter = SegmentCutter(media_root, max_audio_bytes=1)
    first = cutter.source("colors")
    cutter.cut(first, cite("audio, 0:01-0:02"))
    second = cutter.source("late_audio")
    part = cutter.cut(second, cite("audio, 0:03.6-0:04.4"))
    open_tracks = {p.name: s.audio_bytes for p, s in cutter._sources.items()}
    assert (
        open_tracks == {"colors.mp4": 0, "late_audio.mp4": cutter.audio_bytes}
        and cutter.audio_bytes > 0
    )
    # a released track is decoded again when needed, with the same content
    again = cutter.cut(first, cite("audio, 0:05-0:06"))
    assert dominant_tone(again.waveform[1000:-1000]) == pytest.approx(TONES[5], abs=5)
    assert dominant_tone(part.waveform[1000:-1000]) == pytest.approx(TONES[3], abs=5)
    cutter.close()
