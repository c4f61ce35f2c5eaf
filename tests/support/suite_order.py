"""The order the suite runs in, and which tests go together on two workers.

scripts/test.sh runs the suite on two pytest-xdist workers (`-n 2 --dist loadscope
--no-loadscope-reorder`): most of its time is engine starts, which take one core each. A unit
of work (a scope) goes to one worker whole, in the order collected:

1. the modules that share engines (the session's pool, tests/support/engine_pool.py) or the
   session's prompt ledger (tests/conftest.py), one scope run one after another: a module
   between them that starts engines of its own would close the pool (tests/e2e/conftest.py), and
   the prompt-route module reads the routes the others held;
2. every other end-to-end module, a scope each (its module-scoped runs are made once), the
   slowest first, so the last to start is a short one;
3. the unit modules, a scope each.

Each module keeps its tests' order. Without workers this is only the order.
"""

from __future__ import annotations

import pathlib

import pytest

from .paths import ROOT

E2E = ROOT / "tests" / "e2e"
SHARED_FIXTURES = ("engine_pool", "prompt_ledger")

# The modules of (1). The workers' collection checks this list against the modules whose tests
# ask for SHARED_FIXTURES (the controller that schedules them sees only test ids).
SHARED_MODULES = (
    "test_batching_pays",
    "test_engine_contract",
    "test_engine_transformers",
    "test_engine_transformers_reach",
    "test_engine_vllm",
    "test_engine_vllm_prompt_bos",
    "test_families_e2e",
    "test_reach_serve_e2e",
    "test_serve_e2e",
    "test_serve_prompt_routes",
)
SHARED_SCOPE = "shared-engines"

# A scheduling hint for (2), nothing more: the slowest modules that start engines of their own,
# slowest first (a fresh-clone run's durations, docs/performance.md), except where a module
# marked memory_heavy would otherwise wait for another. The others follow them.
SLOWEST_FIRST = (
    "test_score_e2e",
    "test_engine_ray",
    "test_generate_e2e",
    "test_data_parallel_e2e",  # before the prompt-route module (memory-heavy, as it is) starts
    "test_program_e2e",
    "test_bundle",
    "test_thought_budget",
    "test_folder_engines",
)


def _is_e2e(item) -> bool:
    return pathlib.Path(str(item.fspath)).is_relative_to(E2E)


def rank(item) -> tuple[int, int]:
    name = item.module.__name__
    if not _is_e2e(item):
        return (2, 0)
    if name in SHARED_MODULES:
        return (0, 0)
    return (1, SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    asking = {
        item.module.__name__
        for item in items
        if _is_e2e(item) and any(f in item.fixturenames for f in SHARED_FIXTURES)
    }
    if unlisted := sorted(asking - set(SHARED_MODULES)):
        raise pytest.UsageError(
            f"{', '.join(unlisted)}: uses {' or '.join(SHARED_FIXTURES)} but is not in "
            "tests/support/suite_order.py's SHARED_MODULES (its engines would start on both workers)"
        )
    items[:] = sorted(items, key=rank)


def scope_of(nodeid: str) -> str:
    """The unit of work a test id belongs to: the shared modules' one scope, else its module."""
    module = nodeid.split("::", 1)[0]
    return SHARED_SCOPE if pathlib.PurePath(module).stem in SHARED_MODULES else module


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's module scopes (loadscope), with the shared modules as one scope. (Its own
    grouping by mark, loadgroup, does not work on pytest 9: it renames test ids through an
    attribute pytest 9 no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class SharedEnginesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SharedEnginesTogether(config, log)
