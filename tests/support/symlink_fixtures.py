"""A media root with symlinks inside and out (fixtures: tests/conftest.py loads this plugin)."""

from __future__ import annotations

import os
import shutil

import pytest


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
