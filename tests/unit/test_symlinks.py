"""Video paths and symlinks, as users lay out media: nothing outside the allowed roots is
opened or even stat'ed (checked under strace)."""

from __future__ import annotations

import pytest

from murgat_local.media.segments import SegmentCutter
from murgat_local.media.source import MediaError


def test_a_root_that_is_a_symlink_and_links_that_stay_inside_work(layout):
    tmp, root, _ = layout
    cutter = SegmentCutter(tmp / "root_link")
    assert cutter.source("colors").path == root / "colors.mp4"
    assert cutter.source("clips/alias").path == root / "colors.mp4"


def test_paths_that_leave_the_root_are_refused(layout):
    tmp, root, outside = layout
    cutter = SegmentCutter(root)
    for video in (
        "evil",
        "chain",
        "../OUTSIDE_ZONE/secret",
        str(outside / "secret.mp4"),
        "clips/../../OUTSIDE_ZONE/secret",
    ):
        with pytest.raises(MediaError, match="escapes the media root"):
            cutter.source(video)
    (root / "folder.mp4").mkdir()
    with pytest.raises(MediaError, match="is a folder"):
        cutter.source("folder.mp4")


def test_allow_outside_opens_a_second_root(layout):
    tmp, root, outside = layout
    cutter = SegmentCutter(root, allow_outside=(outside,))
    assert cutter.source("evil").path == outside / "secret.mp4"
    assert cutter.source(str(outside / "secret.mp4")).path == outside / "secret.mp4"
