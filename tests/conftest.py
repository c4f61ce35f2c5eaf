"""Shared fixtures: sample media built once per session, and the local test models' location."""

from __future__ import annotations

import os
import pathlib

# A pytest-xdist worker (scripts/test.sh runs two) starts with COLUMNS=80 set, which the CLI's
# consoles would keep for the whole session: tests that give CliRunner a width of their own (a
# long tmp path in a table) get it, as in a serial run.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)

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
    "support.suite_order",  # the order the suite runs in, and what goes together on two workers
]

# Engines built in-process by tests stay offline, as the `murgat` command keeps them.
offline.enforce()
# vLLM's CPU build lets this variable override a preset's `kv_cache_memory_bytes`: the suite runs
# the test presets' own KV cache (256 MiB: several engines fit side by side on two workers),
# whatever the caller's shell exports.
os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)


def _worker_cores() -> str | None:
    """On `pytest -n N` (scripts/test.sh), this worker's share of the cores as vLLM's CPU build
    reads them (VLLM_CPU_OMP_THREADS_BIND): without it every worker's engines bind to the same
    first core. None when not a worker, when the caller set the binding, or with too few cores."""
    name, count = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not name or not count or "VLLM_CPU_OMP_THREADS_BIND" in os.environ:
        return None
    cores, n, i = sorted(os.sched_getaffinity(0)), int(count), int(name.removeprefix("gw"))
    share = len(cores) // n
    return ",".join(map(str, cores[i * share : (i + 1) * share])) if share else None


if (_bind := _worker_cores()) is not None:
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = _bind


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
