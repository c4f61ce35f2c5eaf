"""A segment reference is a plain value that can be cut anywhere (what the Ray engine sends)."""

from __future__ import annotations

import pickle

from murgat_local.media.segments import SegmentCutter, SegmentRef, cut_ref
from murgat_local.text.citations import parse_citations


def test_a_segment_reference_is_a_plain_value_cut_anywhere(media_root):
    """Pickled, sent, and cut in a fresh cutter: the same frames or samples as the run's cutter."""
    cutter = SegmentCutter(media_root)
    ref = cutter.source("colors")
    for text in ("(visual, 0:01)", "(visual, 0:01-0:03)", "(audio, 0:00-0:02)"):
        c = parse_citations(text)[0]
        seg = pickle.loads(pickle.dumps(SegmentRef(ref, c, cutter.opts)))
        here, there = cutter.cut(ref, c), cut_ref(seg)
        assert type(here) is type(there) and seg.modality == here.modality
        a = getattr(here, "pixels", getattr(here, "frames", getattr(here, "waveform", None)))
        b = getattr(there, "pixels", getattr(there, "frames", getattr(there, "waveform", None)))
        assert a.shape == b.shape and (a == b).all()
    assert len(pickle.dumps(seg)) < 4096  # a reference, not the media
