"""Video paths and symlinks, as users lay out media: nothing outside the allowed roots is
opened or even stat'ed (checked under strace)."""

from __future__ import annotations

import os
import shutil

import pytest

from murgat_local.media.segments import SegmentCutter
from murgat_local.media.source import MediaError


@pytest.fixture()
def layout(tmp_path, media_root):
    root = tmp_path / "media"
    (root / "clips").mkdir(parents=True)
    shutil.copy(media_root / "colors.mp4", root / "colors.mp4")
    outside = tmp_path / "OUTSIDE_ZONE"
    outside.mkdir()
    shutil.copy(media_root / "colors.mp4", outside / "secret.mp4")
    os.symlink("../colors.mp4", root / "clips" / "alias.mp4")  # stays inside
    os.symlink(outside / "secret.mp4", root / "evil.mp4")  # leaves the root
    os.symlink("clips/../evil.mp4", root / "chain.mp4")  # a link to a link that leaves
    os.symlink(root, tmp_path / "root_link")  # the root itself through a link
    return tmp_path, root, outside


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
