"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import pytest
from support.engine_pool import EnginePool


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
    (`pytest_collection_modifyitems` below); a module that does not use it may start engines of its own,
    so it first gets back the memory the pool's idle engines held (they start again if asked)."""
    if _POOL and not any(
        "engine_pool" in item.fixturenames
        for item in request.session.items
        if item.module is request.module
    ):
        _POOL[0].close()


def pytest_collection_modifyitems(session, config, items):
    """The modules that share the pool's engines run first and one after another (a module
    between them that starts engines of its own would close the pool and cost every restart);
    each module keeps its tests' order, and the rest keep theirs."""
    here = str(__file__).rsplit("/", 1)[0]
    pooled = {
        item.module.__name__
        for item in items
        if str(item.fspath).startswith(here) and "engine_pool" in item.fixturenames
    }
    items[:] = sorted(
        items,
        key=lambda item: (
            str(item.fspath).startswith(here) and item.module.__name__ not in pooled,
        ),
    )
