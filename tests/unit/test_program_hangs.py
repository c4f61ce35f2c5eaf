"""No plan can hang a run: a hostile plan's shared structures, operations and tool arguments end with a
named limit while the process stays free.

Each hostile plan below used to freeze its whole process (a C-level walk of 2**60 paths holding the
GIL) or to spend memory its counters did not see. Every case runs in this process while a watcher
thread ticks: a plan that held the GIL for long would show as a long gap between ticks. A
faulthandler timer ends the process if a plan hangs anyway, so a regression fails instead of
stalling CI (the watcher, the guard and the toolset: support/program_guards.py).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.program_guards import GAP_S, MARGIN_S, SHARED, SHARED_TUPLE, Tools, Watcher, hang_guard

from murgat_local.generate.program import Limits, run_logic_source

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
