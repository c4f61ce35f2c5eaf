"""No plan can hang a run: sizes, work, bytes and time are counted before an operation runs.

Each hostile plan below used to freeze its whole process (a C-level walk of 2**60 paths holding the
GIL) or to spend memory its counters did not see. Every case runs in this process while a watcher
thread ticks: a plan that held the GIL for long would show as a long gap between ticks. A
faulthandler timer ends the process if a plan hangs anyway, so a regression fails instead of
stalling CI.
"""

from __future__ import annotations

import faulthandler
import json
import sys
import threading
import time
import tracemalloc
import warnings
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from murgat_local.generate.program import Evidence, Limits, Span, parse_logic, run_logic_source
from murgat_local.generate.program.budget import RunBudget
from murgat_local.generate.program.trace import bounded_record
from murgat_local.generate.program.values import error_text
from murgat_local.pipeline.rounds import RoundBatcher

# A hung plan holds the GIL without end; these bounds sit far above what a loaded 2-core machine's
# scheduler adds to a 10 ms tick, and far below a hang.
GAP_S = 2.0
MARGIN_S = 3.0


class Tools:
    def __init__(self) -> None:
        self.received: list[int] = []

    def find(self, description, modality):
        return [Span(1, 2)]

    def query(self, time, question, modality):
        return Evidence("seen", str(time), modality)

    def answer(self, question, evidence, options):
        self.received.append(len(question) + sum(len(x) for x in evidence if isinstance(x, str)))
        return "B"


class Watcher:
    """Ticks every 10 ms in its own thread; `gap` is the longest time it could not run."""

    def __init__(self) -> None:
        self.gap = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            time.sleep(0.01)
            now = time.monotonic()
            self.gap = max(self.gap, now - last)
            last = now

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def hang_guard(seconds: float = 120.0):
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# Two structures equal in shape but distinct, each sharing its children: 61 lists hold 2**60 paths.
SHARED = "x = [1]\nw = [1]\nfor i in range(60):\n    x = [x, x]\n    w = [w, w]\n"
SHARED_TUPLE = "x = (1,)\nfor i in range(60):\n    x = (x, x)\n"

BLOWUPS = [
    ("equality", SHARED + "z = x == w"),
    ("inequality", SHARED + "z = x != w"),
    ("membership", SHARED + "z = w in [x]"),
    ("max", SHARED + "z = max([x, w])"),
    ("min", SHARED + "z = min(x, w)"),
    ("ordering", SHARED + "z = x < w"),
    ("dict key", SHARED_TUPLE + "d = {x: 1}"),
    ("dict lookup", SHARED_TUPLE + "d = {1: 2}\nz = d[x]"),
    ("str", SHARED + "s = str(x)"),
    ("f-string", SHARED + 's = f"{x}"'),
    ("concatenation", SHARED + "y = x + x\nz = y == w + w"),
    ("repetition", SHARED + "y = x * 2\nz = y == w * 2"),
    ("slice", SHARED + "y = x[0:2]\nz = y == w"),
    ("enumerate", SHARED + "y = enumerate(x)\nz = y == enumerate(w)"),
    ("tool argument", 's = "ab" * 10000\nanswer(s, [s] * 1000, None)'),
    ("append", "x = []\nw = []\nfor i in range(60):\n    x.append(x)\n    w.append(w)\nz = x == w"),
]


@pytest.mark.parametrize("name,source", BLOWUPS, ids=[b[0] for b in BLOWUPS])
def test_shared_structures_end_with_a_named_limit_and_never_hold_the_process(name, source):
    limits = Limits(max_seconds=5.0)
    with hang_guard(), Watcher() as w:
        t0 = time.monotonic()
        trace = run_logic_source(source, Tools(), imperative=False, limits=limits)
        took = time.monotonic() - t0
    assert trace.status == "stopped", (name, trace.status, trace.error)
    assert "(limit max_" in trace.error.reason, trace.error.message
    assert took < limits.max_seconds + MARGIN_S, took
    assert w.gap < GAP_S, f"{name}: the watcher was held for {w.gap:.2f} s"


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


# ---------------------------------------------------------------- property: any structure, any operation

_BUILD = st.lists(
    st.sampled_from(
        [
            "x = [x, x]",
            "x = (x, x)",
            "x = [x] * 3",
            "x = x + x",
            "x.append(x)",
            "x = {1: x}",
            "x = [x, [x]]",
            "x = x[0:5]",
            "x = enumerate(x)",
            'x = [x, "ab" * 50]',
        ]
    ),
    min_size=1,
    max_size=6,
)
_OPS = st.sampled_from(
    [
        "z = x == y",
        "z = x != y",
        "z = x < y",
        "z = x in [y, y]",
        "z = y in x",
        "z = max([x, y])",
        "z = min(x, y)",
        "z = str(x)",
        'z = f"{x}{y}"',
        "z = {x: 1}",
        "z = {1: x}[1]",
        "z = len(x)",
        'z = answer("q", [], x)',
        "z = [x, y] == [y, x]",
        "z = x * 2",
        "z = x + y",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(build=_BUILD, turns=st.integers(1, 64), op=_OPS)
def test_any_shared_structure_and_operation_ends_within_its_limit(build, turns, op):
    lines = ["x = [1]"]
    for i, stmt in enumerate(build):
        lines.append(f"for i{i} in range({turns}):")
        lines.append(f"    {stmt}")
    lines += ["y = [x]", op]
    source = "\n".join(lines)
    limits = Limits(max_seconds=2.0)
    with hang_guard(), Watcher() as w:
        t0 = time.monotonic()
        trace = run_logic_source(source, Tools(), imperative=False, limits=limits)
        took = time.monotonic() - t0
    assert took < limits.max_seconds + MARGIN_S, (source, took)
    assert w.gap < GAP_S, (source, w.gap)
    if not trace.ok:
        assert trace.error.kind in ("stopped", "failed"), (source, trace.error)
        if trace.error.kind == "stopped":
            assert "(limit max_" in trace.error.reason


# ---------------------------------------------------------------- messages no limit charged

WRONG_MODALITY = [
    ("query", 'z = video.query("0:01", "q", x)'),
    ("find", 'z = video.find("a", x)'),
]


@pytest.mark.parametrize("tool,call", WRONG_MODALITY, ids=[w[0] for w in WRONG_MODALITY])
def test_a_wrong_argument_is_named_by_its_kind_and_size_never_rendered(tool, call):
    # rendering x would walk 2**60 paths inside one C call, holding the GIL
    with hang_guard(30.0), Watcher() as w:
        t0 = time.monotonic()
        trace = run_logic_source(SHARED + call, Tools(), imperative=True)
        took = time.monotonic() - t0
    assert trace.status == "failed", trace.error
    assert (
        trace.error.reason
        == f"video.{tool}: modality must be 'visual' or 'audio', got a list of 2 items"
    )
    assert took < 2.0, took
    assert w.gap < GAP_S, w.gap
    quoted = run_logic_source('z = video.query("0:01", "q", "v" * 5000)', Tools(), imperative=False)
    assert quoted.status == "failed" and len(quoted.error.reason) < 200, quoted.error
    assert "'vvvv" in quoted.error.reason and "5000 characters" in quoted.error.reason


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
