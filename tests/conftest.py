"""Shared fixtures: sample media built once per session, and the local test models' location."""

from __future__ import annotations

import os
import pathlib

import pytest
from support.paths import ROOT

from murgat_local import offline

# Fixtures shared by a unit and an e2e module (the report's inputs and page, built once per
# session; benchmark layouts, a model folder to damage, a media root with symlinks).
pytest_plugins = [
    "support.report_fixtures",
    "support.benchmark_fixtures",
    "support.model_folder_fixtures",
    "support.symlink_fixtures",
]

# Engines built in-process by tests stay offline, as the `murgat` command keeps them.
offline.enforce()
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


@pytest.fixture(scope="session")
def media_root(tmp_path_factory) -> pathlib.Path:
    from murgat_local.sample.media import build_sample_media

    prebuilt = ROOT / ".local" / "sample_media"
    if (prebuilt / "colors.mp4").exists() and (prebuilt / "truncated.mp4").exists():
        return prebuilt
    out = tmp_path_factory.mktemp("media")
    build_sample_media(out)
    return out


@pytest.fixture(scope="session")
def prompt_ledger() -> dict:
    """model -> route -> modality -> (prompt_digest, bos_count, prompt_tokens) of the smoke
    probes, recorded by the tests that hold each route's engine (`route_checks.record_route`)
    and compared in tests/test_serve_prompt_routes.py."""
    return {}
