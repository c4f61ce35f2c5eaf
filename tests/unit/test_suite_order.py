"""How the suite is cut between two workers (tests/support/suite_order.py): the modules that share
engines are one unit of work, every other module its own, in the order collected."""

from __future__ import annotations

import re

from support.paths import ROOT
from support.suite_order import (
    SHARED_FIXTURES,
    SHARED_MODULES,
    SHARED_SCOPE,
    SLOWEST_FIRST,
    pytest_xdist_make_scheduler,
    scope_of,
)


def test_the_shared_modules_are_one_scope_and_every_other_module_its_own():
    assert scope_of("tests/e2e/test_engine_vllm.py::test_x[tiny-gemma3]") == SHARED_SCOPE
    assert scope_of("tests/e2e/test_serve_prompt_routes.py::test_y") == SHARED_SCOPE
    assert scope_of("tests/e2e/test_score_e2e.py::test_z") == "tests/e2e/test_score_e2e.py"
    assert scope_of("tests/unit/test_cli.py::test_a[x::y]") == "tests/unit/test_cli.py"


def test_the_scheduler_splits_by_that_scope(pytestconfig, monkeypatch):
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"], raising=False)  # two workers
    sched = pytest_xdist_make_scheduler(pytestconfig, None)
    ids = [
        "tests/e2e/test_engine_vllm.py::test_a",
        "tests/e2e/test_families_e2e.py::test_b",
        "tests/e2e/test_bundle.py::test_c",
    ]
    assert [sched._split_scope(i) for i in ids] == [
        SHARED_SCOPE,
        SHARED_SCOPE,
        "tests/e2e/test_bundle.py",
    ]


def test_every_module_asking_for_a_shared_fixture_is_listed_and_none_other():
    """The same check the workers' collection makes, read from the sources: a module that asks
    for the pool or the ledger and is not listed would start its engines on both workers."""
    asking = {
        p.stem
        for p in (ROOT / "tests" / "e2e").glob("test_*.py")
        if any(re.search(rf"\b{f}\b", p.read_text()) for f in SHARED_FIXTURES)
    }
    assert asking == set(SHARED_MODULES)
    assert all((ROOT / "tests" / "e2e" / f"{m}.py").exists() for m in SLOWEST_FIRST)
