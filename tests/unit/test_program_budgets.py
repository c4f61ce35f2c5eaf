"""A plan's budgets: sizes, work, bytes and time are counted before an operation runs, a run's plans
share one memory pool, and errors and records about huge values stay small.

(The hostile plans that used to hang the process: test_program_hangs.py.)
"""

from __future__ import annotations

import json
import sys
import threading
import time
import tracemalloc
import warnings

import pytest
from support.program_guards import Tools, hang_guard

from murgat_local.generate.program import Limits, parse_logic, run_logic_source
from murgat_local.generate.program.budget import RunBudget
from murgat_local.generate.program.trace import bounded_record
from murgat_local.generate.program.values import error_text
from murgat_local.pipeline.rounds import RoundBatcher


def test_plans_keep_python_semantics_for_values_they_read():
    src = (
        "a = [1, [2, 3]]\nb = a + a\nc = [a] * 2\nd = {(1, (2,)): 'k'}\n"
        "inner = a[1]\ninner.append(4)\n"  # shared, as in Python: b and c see it
        "return [b, c, a == [1, [2, 3, 4]], d[(1, (2,))], max([3, 9, 4]), [1, 2] in [[1, 2]], a[1:]]"
    )
    trace = run_logic_source(src, Tools(), imperative=False)
    assert trace.ok, trace.error
    assert trace.returned == (
        "[[1, [2, 3, 4], 1, [2, 3, 4]], [[1, [2, 3, 4]], [1, [2, 3, 4]]], True, 'k', 9, True, [[2, 3, 4]]]"
    )


def test_values_nested_too_deeply_to_walk_are_a_named_limit():
    trace = run_logic_source(
        "x = [1]\nfor i in range(5000):\n    x = [x]\nz = x == [x]", Tools(), imperative=False
    )
    assert trace.status == "stopped" and "limit max_value_depth" in trace.error.reason, trace.error


def test_tool_arguments_are_bounded_and_the_trace_stays_small():
    src = (
        's = "a" * 20000\nbig = []\nfor i in range(1000):\n    big.append(s)\n'
        'for k in range(64):\n    answer("q", big, None)\n'
    )
    tools = Tools()
    trace = run_logic_source(src, tools, imperative=False)
    assert trace.status == "stopped", trace.error
    assert "limit max_tool_chars" in trace.error.reason
    assert tools.received == []  # the tool never saw it
    small = run_logic_source('s = "a" * 5000\nanswer(s, [s, s], None)', tools, imperative=False)
    assert small.ok, small.error
    args = small.calls[0].args
    size = len(json.dumps(small.to_dict()))
    assert size < 4000, size
    assert args["question"].endswith("[5000 characters]") and len(args["question"]) < 600
    assert all(e.endswith("[5000 characters]") for e in args["evidence"])


def test_memory_is_counted_in_bytes():
    limits = Limits(max_bytes=8 * 2**20, max_iterations=2_000_000, max_steps=50_000_000)
    src = "keep = []\nfor i in range(1000):\n    keep.append([str(i * 1000 + j) for j in range(1000)])"
    tracemalloc.start()
    try:
        trace = run_logic_source(src, Tools(), imperative=False, limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert trace.status == "stopped" and "limit max_bytes" in trace.error.reason, trace.error
    assert peak < limits.max_bytes + 4 * 2**20, peak


def test_a_range_too_large_for_a_c_integer_is_a_named_limit():
    for src in (
        "r = range(-2**63, 2**63)",
        "r = range(0, 2**63, 1)",
        "for i in range(-2**63, 2**63 - 1):\n    pass",
    ):
        trace = run_logic_source(src, Tools(), imperative=False)
        assert trace.status == "stopped", (src, trace.error)
        assert "limit max_iterations" in trace.error.reason


def test_parsing_in_many_threads_leaves_warning_filters_as_they_were():
    source = 'x = "\\d \\w"\ny = 1 if x else 2\nreturn x'
    before = list(warnings.filters)
    errors: list = []

    def parse_many() -> None:
        for _ in range(200):
            if isinstance(parse_logic(source, imperative=False), Exception):
                errors.append("refused")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=parse_many) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert warnings.filters == before


def test_run_budget_bounds_how_many_plans_run_at_once():
    budget = RunBudget(max_bytes=3 * 2**20, per_plan=2**20)
    assert budget.concurrent == 3
    live, peak = [0], [0]
    lock = threading.Lock()

    def job(i):
        def run(ask):
            with lock:
                live[0] += 1
                peak[0] = max(peak[0], live[0])
            out = ask([i]) + ask([i * 10])
            with lock:
                live[0] -= 1
            return out

        return run

    batcher = RoundBatcher(lambda calls: [c + 1 for c in calls], max_live=budget.concurrent)
    results = batcher.run([job(i) for i in range(10)])
    assert results == [[i + 1, i * 10 + 1] for i in range(10)]
    assert peak[0] == 3
    # the rounds depend only on the plans, never on thread timing
    again = RoundBatcher(lambda calls: [c + 1 for c in calls], max_live=budget.concurrent)
    again.run([job(i) for i in range(10)])
    assert (again.rounds, again.calls) == (batcher.rounds, batcher.calls)


def test_run_budget_is_shared_by_the_plans_of_a_run():
    src = 'x = []\nfor i in range(1000):\n    x.append("a" * 2000 + str(i))'
    budget = RunBudget(max_bytes=2**20, per_plan=2**20)
    trace = run_logic_source(
        src, Tools(), imperative=False, limits=Limits(max_bytes=2**20), budget=budget
    )
    assert trace.status == "stopped" and "limit max_bytes" in trace.error.reason, trace.error
    assert budget.in_use == 0  # released when the plan ended
    # a pool already held by other plans stops this one at the pool, not the process
    budget.take(2**20 - 2**16, lambda: AssertionError("pool"))
    trace = run_logic_source(
        src, Tools(), imperative=False, limits=Limits(max_bytes=2**22), budget=budget
    )
    assert trace.status == "stopped" and "limit max_run_bytes" in trace.error.reason, trace.error
    assert budget.in_use == 2**20 - 2**16


# A key built from shared tuples of one 20,000-character string: its cost fits `max_work` (each
# string reference is charged its length / 64), but `repr` of it is 163,913,734 characters.
HUGE_KEY = 's = "a" * 20000\nk = (s, s)\nfor i in range(12):\n    k = (k, k)\n'

HUGE_ERRORS = [
    ("lookup", HUGE_KEY + "z = {1: 2}[k]"),
    ("string key", 's = "a" * 20000\nz = {1: 2}[s]'),
    ("augmented", HUGE_KEY + "d = {1: 2}\nd[k] += 1"),
]


@pytest.mark.parametrize("name,source", HUGE_ERRORS, ids=[h[0] for h in HUGE_ERRORS])
def test_an_error_about_a_huge_value_is_a_short_message_built_at_once(name, source):
    with hang_guard(30.0):
        t0 = time.monotonic()
        trace = run_logic_source(source, Tools(), imperative=False)
        took = time.monotonic() - t0
    assert trace.status == "failed", trace.error
    assert trace.error.reason.startswith("KeyError: "), trace.error.reason[:300]
    assert len(trace.error.reason) < 300, len(trace.error.reason)
    assert took < 1.0, took
    assert len(json.dumps(trace.to_dict())) < 4000


def test_error_text_describes_an_exceptions_arguments_without_rendering_them():
    shared: tuple = (1,)
    for _ in range(60):
        shared = (shared, shared)
    t0 = time.monotonic()
    assert error_text(KeyError(shared)) == "KeyError: a tuple of 2 items"
    assert error_text(KeyError([shared] * 3, "x")) == "KeyError: a list of 3 items, 'x'"
    assert time.monotonic() - t0 < 0.1
    long = error_text(ValueError("x" * 10**6))
    assert long.startswith("ValueError: xxx") and len(long) < 300 and "1000000 characters" in long
    assert (
        error_text(ZeroDivisionError("division by zero")) == "ZeroDivisionError: division by zero"
    )
    assert error_text(KeyError(7)) == "KeyError: 7" and error_text(RuntimeError()) == "RuntimeError"


# ---------------------------------------------------------------- a plan's record, as a whole

BIG_TRACE = (
    's = "a" * 20000\nev = ["e" * 600] * 64\n'  # 38,400 characters: within max_tool_chars
    "for i in range(64):\n    answer(s[0:1000], ev, None)\nreturn s[0:19000]"
)


def test_a_plans_record_is_bounded_as_a_whole_and_says_what_was_cut():
    limits = Limits(max_record_chars=50_000)
    trace = run_logic_source(BIG_TRACE, Tools(), imperative=False, limits=limits)
    assert trace.ok, trace.error
    record = {
        "style": "logic",
        "plan": "x" * 100_000,
        "parsed": "y" * 100_000,
        "trace": trace.to_dict(),
    }
    full = len(json.dumps(record))
    assert full > 1_000_000
    kept = bounded_record(record, limits.max_record_chars)
    size = len(json.dumps(kept))
    assert size <= limits.max_record_chars, size
    cut = kept["cut"]
    assert cut["chars"] == full and cut["limit"] == limits.max_record_chars
    assert 0 < cut["calls_dropped"] < 64 and cut["strings_clipped"] >= 3
    calls = kept["trace"]["calls"]
    assert [c["index"] for c in calls] == list(
        range(1, 65 - cut["calls_dropped"])
    )  # the first ones, whole
    assert kept["trace"]["counts"]["tool_calls"] == 64 and kept["trace"]["status"] == "ok"
    assert kept["plan"].startswith("xxx") and "100000 characters" in kept["plan"]
    small = {"style": "logic", "trace": {"calls": [], "status": "ok"}}
    assert bounded_record(small, 1000) == small  # nothing cut, no note
