"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import pytest
from support.engine_pool import EnginePool
from support.memory_gate import BEFORE_MODULE_GIB, WORKERS, one_at_a_time, wait_for_room


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    p = tmp_path_factory.mktemp("cfg") / "run.toml"
    # Short answers keep random-weight responders quick; small batches so a kill lands mid-run;
    # no prefix caching, so a resumed run computes its batches exactly as an uninterrupted one.
    p.write_text(
        "batch_size = 4\n[engine_args]\nenable_prefix_caching = false\n"
        "[generate]\nbatch_size = 4\n[generate.sampling]\nmax_tokens = 40\n"
    )
    return p


_POOL: list[EnginePool] = []  # the session's pool, once a module asked for it


@pytest.fixture(scope="session")
def engine_pool(request):
    """The session's shared engines (support/engine_pool.py), closed together at its end."""
    pool = EnginePool()
    _POOL.append(pool)
    yield pool
    pool.close()
    if pool.started and request.config.getoption("verbose") > 0:
        starts = ", ".join(f"{e}:{m}" for e, m, _ in pool.started)
        print(f"\nengine pool: {len(pool.started)} starts in {pool.start_s:.0f} s ({starts})")


@pytest.fixture(scope="module", autouse=True)
def _pool_makes_room(request):
    """The pool's engines serve the modules that use it, which run first and one after another
    (tests/support/suite_order.py); a module that does not use it may start engines of its own,
    so it first gets back the memory the pool's idle engines held (they start again if asked)."""
    if _POOL and not any(
        "engine_pool" in item.fixturenames
        for item in request.session.items
        if item.module is request.module
    ):
        _close_pool()


def _close_pool() -> None:
    if _POOL:
        _POOL[0].close()


@pytest.fixture(scope="module", autouse=True)
def _one_heavy_module_at_a_time(request, tmp_path_factory):
    """On two workers, a module marked `memory_heavy` (it says why) runs while the other worker
    runs no such module: it waits (30 min at most) for a lock the workers share, in their common
    temporary folder."""
    mark = request.node.get_closest_marker("memory_heavy")
    if WORKERS < 2 or mark is None:
        yield
        return
    lock = tmp_path_factory.getbasetemp().parent / "memory_heavy.lock"
    with one_at_a_time(lock, timeout_s=1800):
        yield


@pytest.fixture(scope="module", autouse=True)
def _room_for_the_module(_one_heavy_module_at_a_time, _pool_makes_room):
    """On two workers, the machine's memory is shared with the other worker's engines: a module
    starts once there is room for its engines (tests/support/memory_gate.py), the pool's idle
    engines closed first when there is not (no module holds them between modules)."""
    if WORKERS > 1:
        wait_for_room(BEFORE_MODULE_GIB, timeout_s=180, free_first=_close_pool)
