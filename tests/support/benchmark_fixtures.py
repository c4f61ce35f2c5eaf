"""The benchmark layouts built from the sample video (fixtures: tests/conftest.py loads this plugin)."""

from __future__ import annotations

import pytest

from murgat_local.sample import benchmarks as layouts


@pytest.fixture(scope="module")
def video(media_root):
    return media_root / "colors.mp4"


@pytest.fixture(scope="module")
def worldsense(tmp_path_factory, video):
    return layouts.worldsense_official(tmp_path_factory.mktemp("ws") / "WorldSense", video)


@pytest.fixture(scope="module")
def videommmu(tmp_path_factory, video):
    return layouts.videommmu(tmp_path_factory.mktemp("vm") / "VideoMMMU", video, shards=2)
