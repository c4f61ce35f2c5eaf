"""Program-aided plans: tool and interpreter bugs are told apart from the plan's failures, runtime
errors are values, any source gives a trace."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.program_tools import FakeTools, no_side_effects

from murgat_local.generate.program import (
    Limits,
    run_logic_source,
    run_narrative_source,
)


class BuggyTools(FakeTools):
    def query(self, time, question, modality):
        raise RuntimeError("engine exploded")

    def find(self, description, modality):
        return "not a list"


def test_tool_bugs_propagate_instead_of_blaming_the_plan():
    with pytest.raises(RuntimeError, match="engine exploded"):
        run_logic_source('video.query("0:01", "q", "visual")', BuggyTools(), imperative=False)
    with pytest.raises(TypeError, match="tool find returned str"):
        run_logic_source('video.find("x", "visual")', BuggyTools(), imperative=True)
    with pytest.raises(RuntimeError, match="engine exploded"):
        run_narrative_source(
            '1. describe("0:01", "visual", "x")\n2. synthesize("y")', BuggyTools(), False
        )


class _Bug(Exception):
    pass


def _shared_key() -> tuple:
    k: tuple = ("a" * 20000,)
    for _ in range(60):
        k = (k, k)
    return k


def test_an_interpreter_bug_is_internal_never_the_plans_failure(monkeypatch):
    from murgat_local.generate.program import interpreter, narrative

    def broken(self, *args):
        raise KeyError(_shared_key())  # its text would be 2**60 copies of the string

    monkeypatch.setattr(interpreter._Interpreter, "augassign", broken)
    trace = run_logic_source("n = 1\nn += 1\nanswer('q', [], None)", FakeTools(), imperative=False)
    assert trace.status == "internal" and trace.error.kind == "internal" and trace.error.line == 2
    assert (
        trace.error.reason.startswith("KeyError in the interpreter (")
        and len(trace.error.reason) < 300
    )
    assert trace.error.reason.endswith(" in broken)"), trace.error.reason  # where our code broke
    assert trace.to_dict()["status"] == "internal" and trace.error.message.startswith(
        "internal: line 2: "
    )

    def crash(*args):
        raise _Bug("oops")

    monkeypatch.setattr(narrative, "_synthesize", crash)
    trace = run_narrative_source(
        '1. describe("0:01", "visual", "x")\n2. synthesize("y")', FakeTools(), False
    )
    assert trace.status == "internal" and trace.error.line == 2 and len(trace.calls) == 1
    assert trace.error.reason.startswith("_Bug in the interpreter ("), trace.error.reason


@pytest.mark.parametrize(
    "source,reason",
    [
        ("d = {}\nd[[1]] = 2", "unhashable type"),
        ("d = {[1]: 2}", "unhashable type"),
        (
            "a = [1]\na[0] = a\nb = [1]\nb[0] = b\nc = a == b",
            "levels of nesting in a compared or hashed value (limit max_value_depth)",
        ),
        ("x = " + "9" * 30, "integer constant has more than 64 bits (limit max_int_bits)"),
        ('x = int("9" * 30)', "bits in an integer (limit max_int_bits)"),
        ("x = min([video.find, 1])", "attribute access 'find' is not allowed"),
        ("x = enumerate(range(5000))", "items in a list, tuple or dict (limit max_items)"),
        ("x = 1e308 * 10\ny = int(x)", "OverflowError"),
        ("x = [1, 2][5]", "IndexError"),
        ("x = (-8) ** 0.5", "the result is a complex number"),
        ("a, b = [1, 2, 3]", "cannot unpack a list value into 2 names"),
    ],
)
def test_runtime_errors_are_values(source, reason):
    with no_side_effects():
        trace = run_logic_source(source, FakeTools(), imperative=True)
    assert trace.status in ("refused", "stopped", "failed") and reason in trace.error.reason, (
        trace.error
    )


_SOUP = st.lists(
    st.sampled_from(
        [
            "x",
            "y",
            "=",
            "+",
            "*",
            "-",
            "/",
            "%",
            "**",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ":",
            ",",
            ".",
            "\n",
            "    ",
            "1",
            "0",
            "10**9",
            '"a"',
            "for",
            "in",
            "while",
            "if",
            "else",
            "return",
            "not",
            "and",
            "or",
            "len(",
            "str(",
            "range(",
            "max(",
            "x.append(",
            "video.query(",
            '"0:01"',
            '"visual"',
            "answer(",
            'f"{x}"',
            "True",
            "None",
            "break",
            "lambda",
            "__class__",
            "==",
            "<",
            "d[",
            "[x for x in",
            "def main(video):\n",
        ]
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=int(os.environ.get("PROGRAM_FUZZ_EXAMPLES", "300")), deadline=None)
@given(_SOUP, st.booleans())
def test_any_source_gives_a_trace(source, imperative):
    with no_side_effects():
        trace = run_logic_source(source, FakeTools(), imperative, Limits(max_steps=5000))
    assert trace.status in ("ok", "refused", "stopped", "failed"), (
        source,
        trace.error,
    )  # never "internal"
