"""Open videos and decoded audio stay bounded however many distinct videos a chunk holds."""

from __future__ import annotations

import gc
import json
import os
import weakref

import pytest
from support.fakes import OracleEngine

from murgat_local.config import RunConfig
from murgat_local.digests import shared_memo
from murgat_local.media.source import VideoSource
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.sample.media import _write, tones

N_VIDEOS = 50
MAX_OPEN = 4
TRACK_BYTES = 2 * 16000 * 4  # one 2 s track, 16 kHz float32
MAX_AUDIO = 3.5 * TRACK_BYTES  # room for three decoded tracks (AAC pads each a little)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class Watching(OracleEngine):
    """The oracle judge, sampling the process's open files and decoded audio at every batch."""

    def __init__(self, media):
        super().__init__()
        self.media = media
        self.fds: list[int] = []
        self.audio: list[int] = []

    def judge(self, requests):
        gc.collect()
        self.fds.append(_open_fds())
        live = [o for o in list(SOURCES) if o.path.parent == self.media]
        self.audio.append(sum(s.audio_bytes for s in live))
        return super().judge(requests)


# Every VideoSource ever made, weakly (gc.get_objects() would race with the decoding thread).
SOURCES: weakref.WeakSet = weakref.WeakSet()


@pytest.fixture(autouse=True)
def _track_sources(monkeypatch):
    init = VideoSource.__init__

    def tracked(self, *a, **kw):
        init(self, *a, **kw)
        SOURCES.add(self)

    monkeypatch.setattr(VideoSource, "__init__", tracked)


def test_fifty_videos_in_one_chunk_stay_within_the_bounds(tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    for k in range(N_VIDEOS):
        # distinct files (the segment cache is keyed by content): a different loudness each
        _write(media / f"v{k:02d}.mp4", 2, audio=tones(2) * (0.3 + 0.01 * k))
    rows = [
        {
            "id": f"r{k}",
            "video": f"v{k:02d}",
            "model_generation": "The screen is red (visual, 0:00-0:01). A tone plays (audio, 0:00-0:01).",
        }
        for k in range(N_VIDEOS)
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = RunConfig(
        judge="oracle",
        chunk_size=512,
        batch_size=16,
        decontextualize=False,
        media={"max_open_videos": MAX_OPEN, "max_audio_mb": MAX_AUDIO / 2**20},
    )
    engine = Watching(media.resolve())
    shared_memo()  # the digest memo's SQLite files are opened once per process, not per video
    baseline = _open_fds()
    runner = Runner(cfg, media, tmp_path / "out", engines={"oracle": engine}, summary=RunSummary)
    try:
        result = runner.run(path)
    finally:
        runner.close()
    assert result.summary.scored == N_VIDEOS, result.summary
    assert result.exit_code == 0, (result.summary.failure, result.summary.stages)
    assert result.summary.segments_decoded == 2 * N_VIDEOS
    # decord holds a few descriptors per open video; 50 videos held open would be far more.
    assert max(engine.fds) - baseline <= 3 * MAX_OPEN + 8, (baseline, engine.fds)
    assert max(engine.audio) <= MAX_AUDIO, engine.audio


def test_room_is_made_before_a_track_is_decoded_not_after(tmp_path, monkeypatch):
    """The bound holds while a track decodes: a thread reading the open videos' audio between
    the decoding and the cut's end (the judge, while the media thread cuts the next batch) never
    sees one track too many."""
    from murgat_local.media.segments import SegmentCutter
    from murgat_local.text.citations import parse_citations

    for k in range(5):
        _write(tmp_path / f"v{k}.mp4", 2, audio=tones(2) * (0.3 + 0.01 * k))
    cutter = SegmentCutter(tmp_path, max_open=8, max_audio_bytes=int(MAX_AUDIO))
    seen = []
    decode = VideoSource._decode_audio

    def watched(self):
        wave = decode(self)
        seen.append(sum(s.audio_bytes for s in list(SOURCES) if s.path.parent == tmp_path))
        return wave

    monkeypatch.setattr(VideoSource, "_decode_audio", watched)
    (citation,) = parse_citations("(audio, 0:00-0:01)")
    for k in range(5):
        cutter.cut(cutter.source(f"v{k}"), citation)
    assert len(seen) >= 5 and max(seen) <= MAX_AUDIO, seen
