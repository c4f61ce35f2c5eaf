"""Program-aided plans: hostile plans are refused or stopped, with no side effects (an audit hook
watches file opens, exec, processes and sockets), against a fake toolset."""

from __future__ import annotations

import sys

import pytest
from support.program_tools import FakeTools, no_side_effects

from murgat_local.generate.program import (
    Limits,
    run_logic_source,
    run_narrative_source,
)

BIG = Limits(max_source_chars=10**7)
# One refusal for a tree deeper than max_depth, whether Python's parser gave up on it first or not.
NESTED = "program is nested too deeply (limit max_depth: 64 levels)"
DEEP = ["x = " + "1+" * 10_000 + "1", "x = " + "not " * 3000 + "1", "x = " + "1+" * 300 + "1"]


HOSTILE: list[tuple[str, str, Limits]] = [
    ("import os", "'import' is not allowed", Limits()),
    ("from os import path", "'import' is not allowed", Limits()),
    ('__import__("os")', "name '__import__' is not allowed", Limits()),
    (
        "().__class__.__bases__[0].__subclasses__()",
        "attribute access '__subclasses__' is not allowed",
        Limits(),
    ),
    ('x = 1\ngetattr(x, "y")', "calling 'getattr' is not allowed", Limits()),
    ("x = 1\ny = x.__dict__", "attribute access '__dict__' is not allowed", Limits()),
    ("sys._getframe(0)", "attribute access '_getframe' is not allowed", Limits()),
    ("c = (lambda: 0).__code__", "attribute access '__code__' is not allowed", Limits()),
    ("g = (x for x in [1])\nf = g.gi_frame", "'generator expression' is not allowed", Limits()),
    ('"{0.__class__}".format(1)', "attribute access 'format' is not allowed", Limits()),
    ('s = f"{1!r}"', "f-string conversion '!r' is not allowed", Limits()),
    ('s = f"{1:>999999999}"', "f-string format spec is not allowed", Limits()),
    ('open("/etc/passwd")', "calling 'open' is not allowed", Limits()),
    ('eval("1")', "calling 'eval' is not allowed", Limits()),
    ('exec("x=1")', "calling 'exec' is not allowed", Limits()),
    ('compile("1", "f", "eval")', "calling 'compile' is not allowed", Limits()),
    ("x = __builtins__", "name '__builtins__' is not allowed", Limits()),
    ("while True:\n    pass", "more than 10000 loop iterations (limit max_iterations)", Limits()),
    (
        "for i in range(10**12):\n    pass",
        "loop iterations in a range (limit max_iterations)",
        Limits(),
    ),
    ("x = " + "(" * 100_000 + "1" + ")" * 100_000, "limit max_source_chars", Limits()),
    (
        "x = " + "(" * 100_000 + "1" + ")" * 100_000,
        "syntax error: too many nested parentheses",
        BIG,
    ),
    ("x = " + "[" * 10_000 + "]" * 10_000, "syntax error: too many nested parentheses", BIG),
    (DEEP[0], NESTED, BIG),
    ("x = " + "-" * 100_000 + "1", NESTED, BIG),
    (DEEP[1], NESTED, BIG),
    (DEEP[2], NESTED, Limits()),
    (
        'x = "a" * 10**10',
        "more than 20000 characters in a string (limit max_string_chars)",
        Limits(),
    ),
    ("x = [0] * 10**10", "items in a list, tuple or dict (limit max_items)", Limits()),
    (
        "x = [0]\nwhile True:\n    x = x + x",
        "items in a list, tuple or dict (limit max_items)",
        Limits(),
    ),
    (
        "x = [0]\nwhile True:\n    x += x",
        "items in a list, tuple or dict (limit max_items)",
        Limits(),
    ),
    (
        's = "ab"\nwhile True:\n    s = s + s',
        "characters in a string (limit max_string_chars)",
        Limits(),
    ),
    ("n = 2\nwhile True:\n    n = n * n", "bits in an integer (limit max_int_bits)", Limits()),
    ("x = 2 ** 100000", "bits in an integer (limit max_int_bits)", Limits()),
    ('x = "%999999999d" % 1', "string formatting with '%' is not allowed", Limits()),
    (
        "a = []\na.append(a)\ns = str(a)",
        "characters in a string (limit max_string_chars)",
        Limits(),
    ),
    (
        'x = []\nfor i in range(90):\n    y = []\n    for j in range(100):\n        y.append("aaaaaaaaaa" * 2000)\n    x.append(y)',
        "bytes of values built (limit max_bytes)",
        Limits(),
    ),
    (
        'while True:\n    video.query("0:01", "q", "visual")',
        "more than 64 tool calls (limit max_tool_calls)",
        Limits(),
    ),
    ("f = lambda x: x", "'lambda' is not allowed", Limits()),
    ("class A:\n    pass", "'class' is not allowed", Limits()),
    ("try:\n    x = 1\nexcept Exception:\n    pass", "'try' is not allowed", Limits()),
    ('with open("x") as f:\n    pass', "'with' is not allowed", Limits()),
    ("global x", "'global' is not allowed", Limits()),
    ("x = 1\ndel x", "'del' is not allowed", Limits()),
    ("def main(video):\n    yield 1", "'yield' is not allowed", Limits()),
    ("@decorate\ndef main(video):\n    return 1", "decorators are not allowed", Limits()),
    (
        "def main(video):\n    return 1\ndef helper():\n    return 2",
        "a second 'def' ('helper') is not allowed",
        Limits(),
    ),
    (
        "def main(video):\n    def helper():\n        return 2\n    return 1",
        "'def helper' is not allowed",
        Limits(),
    ),
    ("def main(video):\n    return main(video)", "calling 'main' is not allowed", Limits()),
    ("x = 1\n" * 2_000_000, "more than 20000 (limit max_source_chars)", Limits()),
    ("video = 1", "cannot assign to reserved name 'video'", Limits()),
    ("f = len", "'len' can only be called", Limits()),
    ("q = video.query", "attribute access 'query' is not allowed", Limits()),
    ('answer(question="x", evidence=[])', "keyword arguments are not allowed", Limits()),
    ("args = []\nanswer(*args)", "starred arguments are not allowed", Limits()),
    ("print(1)", "calling 'print' is not allowed", Limits()),
    ("x = [1]\nx.pop()", "attribute access 'pop' is not allowed", Limits()),
    ('x = b"bytes"', "constant of type bytes is not allowed", Limits()),
    ("x = 1 << 1000", "operator LShift is not allowed", Limits()),
    ("x = 1\x00", "syntax error", Limits()),
    (
        "x = = 1",
        "syntax error: invalid syntax",
        Limits(),
    ),  # CPython would open "<unknown>" to quote it
    ("if 1:\nx = 1", "syntax error: expected an indented block", Limits()),
    ("x = 1 / 0", "ZeroDivisionError", Limits()),
    ("x = y + 1", "name 'y' is not defined", Limits()),
    ('video.query(1, "q", "visual")', "time must be a string or a span", Limits()),
    ('video.query("0:01", "q", "smell")', "modality must be 'visual' or 'audio'", Limits()),
    ("x = {**{}}", "dict unpacking", Limits()),
    ("if (x := 1):\n    pass", "':=' is not allowed", Limits()),
    ("break", "'break' outside a loop", Limits()),
]


@pytest.mark.parametrize(
    "source,reason,limits", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))]
)
def test_hostile_logic_plans_are_refused_or_stopped(source, reason, limits):
    tools = FakeTools()
    with no_side_effects():
        trace = run_logic_source(source, tools, imperative=True, limits=limits)
    assert trace.status in ("refused", "stopped", "failed")
    assert reason in trace.error.reason, trace.error.message
    assert trace.error.message.startswith(trace.status)
    assert trace.limits is limits
    if trace.status == "refused":
        assert tools.log == [] and trace.calls == ()


@pytest.mark.parametrize("recursion_limit", [1000, 5000])
def test_a_deep_plan_is_refused_alike_whatever_the_recursion_limit(recursion_limit):
    """How deep CPython's parser goes depends on the process's recursion limit (torch's compiler
    and hypothesis raise it): a plan's refusal does not."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(recursion_limit)
    try:
        errors = [run_logic_source(s, FakeTools(), True, limits=BIG).error for s in DEEP]
    finally:
        sys.setrecursionlimit(before)
    assert [(e.kind, e.reason, e.line) for e in errors] == [("refused", NESTED, None)] * len(DEEP)


def test_tool_call_flood_makes_exactly_the_allowed_calls():
    tools = FakeTools()
    src = 'for i in range(10000):\n    video.query("0:01", "q", "visual")'
    with no_side_effects():
        trace = run_logic_source(src, tools, imperative=True)
    assert trace.status == "stopped" and trace.error.line == 2
    assert trace.error.message == "stopped: line 2: more than 64 tool calls (limit max_tool_calls)"
    assert len(tools.log) == len(trace.calls) == 64


def test_path_escape_is_passed_to_the_tool_unchanged_and_nothing_is_opened():
    tools = FakeTools()
    src = 'e = video.query("../../etc/passwd", "read it", "visual")\nreturn answer("q", [e], None)'
    with no_side_effects():
        trace = run_logic_source(src, tools, imperative=False)
    assert trace.ok
    assert tools.log[0] == ("query", "../../etc/passwd", "read it", "visual")
    assert trace.calls[0].args["time"] == "../../etc/passwd"


def test_hostile_narratives_are_refused_without_side_effects():
    bad = [
        ('1. synthesize("x")\n2. synthesize("y")', "must be the last line"),
        ('1. describe(#1, "visual", "x")\n2. synthesize("y")', "#1 must name an earlier line"),
        (
            '1. open("/etc/passwd")\n2. synthesize("y")',
            "expected find(...), describe(...) or synthesize(...)",
        ),
        (
            '1. describe("../../etc/passwd", "visual", "x")\n2. synthesize("y")',
            "malformed arguments to describe",
        ),
        ("x" * 10_000_000, "limit max_source_chars"),
    ]
    for text, reason in bad:
        tools = FakeTools()
        with no_side_effects():
            trace = run_narrative_source(text, tools, imperative=True)
        assert trace.status == "refused" and reason in trace.error.reason, (text[:60], trace.error)
        assert tools.log == []
