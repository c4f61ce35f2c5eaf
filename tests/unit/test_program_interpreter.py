"""Program-aided plans: the logic interpreter and the narrative runner, against a fake toolset.

Pure logic: no engine, no media. An audit hook records file opens (and exec / process / socket
events) while hostile plans are checked and run, so "nothing opened a file" is asserted, not hoped.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from murgat_local.generate.program import (
    Evidence,
    Limits,
    NarrativePlan,
    ProgramError,
    Span,
    ToolError,
    Tools,
    format_seconds,
    narrative_regex,
    parse_logic,
    parse_narrative,
    run_logic_source,
    run_narrative_source,
)
from murgat_local.text.citations import parse_time

# ---------------------------------------------------------------- audit hook (installed once)

_WATCHED = (
    "open",
    "exec",
    "os.system",
    "subprocess.Popen",
    "socket.connect",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "ctypes.dlopen",
    "import",
)
_AUDIT = {"on": False, "events": []}


def _audit(event: str, args: tuple) -> None:
    if _AUDIT["on"] and event in _WATCHED:
        _AUDIT["events"].append((event, repr(args)[:200]))


sys.addaudithook(_audit)


@contextmanager
def no_side_effects():
    _AUDIT["events"] = []
    _AUDIT["on"] = True
    try:
        yield
    finally:
        _AUDIT["on"] = False
    assert _AUDIT["events"] == [], f"a plan caused side effects: {_AUDIT['events']}"


# ---------------------------------------------------------------- fake tools


class FakeTools:
    """Deterministic: find gives two spans, query describes its span, answer picks 'B'.
    A time of "0:59" raises ToolError (a recorded failed call)."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def find(self, description: str, modality: str) -> list[Span]:
        self.log.append(("find", description, modality))
        return [Span(12, 15), Span(40, 41)]

    def query(self, time, question: str, modality: str) -> Evidence:
        self.log.append(("query", str(time), question, modality))
        if str(time) == "0:59":
            raise ToolError("0:59 is past the end of the video")
        return Evidence(f"At {time} the cup is red.", str(time), modality)

    def answer(self, question: str, evidence: list, options) -> str:
        self.log.append(("answer", question, len(evidence), options))
        return "B. The cup is red."


def test_fake_satisfies_protocol():
    assert isinstance(FakeTools(), Tools)


# ---------------------------------------------------------------- valid plans

IMPERATIVE_LOGIC = """def main(video):
    spans = video.find("a man holding a cup", "visual")
    notes = []
    for t in spans:
        notes.append(video.query(t, "What colour is the cup?", "visual"))
    if len(notes) == 0:
        notes.append(video.query("0:00-0:10", "What is heard?", "audio"))
    return answer("What colour is the cup?", notes, ["A", "B", "C", "D"])
"""

DECLARATIVE_LOGIC = """
notes = [video.query(t, "What colour is the cup?", "visual") for t in ["0:12", "0:40-0:41"]]
heard = video.query("0:59", "What is heard?", "audio")
label = f"{len(notes)} notes"
n, m = 0, 0
while n < 3:
    n += 1
    if n == 2:
        continue
    m = m + n
d = {"k": [1, 2, 3][1:], "x": str(m)}
d["k"] = d["k"] + [max(1, 9), min([4, 5])]
if heard is None and d["x"] == "4" and not (m > 10 or False):
    notes.append(label)
answer("Which colour?", notes + [heard], None)
"""


def test_imperative_logic_runs_and_traces_every_call():
    tools = FakeTools()
    trace = run_logic_source(IMPERATIVE_LOGIC, tools, imperative=True)
    assert trace.ok, trace.error
    assert [(c.tool, c.args) for c in trace.calls] == [
        ("find", {"description": "a man holding a cup", "modality": "visual"}),
        (
            "query",
            {"time": "0:12-0:15", "question": "What colour is the cup?", "modality": "visual"},
        ),
        (
            "query",
            {"time": "0:40-0:41", "question": "What colour is the cup?", "modality": "visual"},
        ),
        (
            "answer",
            {
                "question": "What colour is the cup?",
                "evidence": [{"call": 2}, {"call": 3}],
                "options": ["A", "B", "C", "D"],
            },
        ),
    ]
    assert [c.index for c in trace.calls] == [1, 2, 3, 4]
    assert [c.line for c in trace.calls] == [2, 5, 5, 8]
    assert [entry[0] for entry in tools.log] == ["find", "query", "query", "answer"]
    assert trace.answer == trace.returned == "B. The cup is red."
    assert trace.tool_calls == 4 and trace.iterations == 2 and trace.steps > 0
    assert trace.to_dict()["counts"]["tool_calls"] == 4


def test_declarative_logic_runs_and_a_failed_call_is_recorded():
    tools = FakeTools()
    trace = run_logic_source(DECLARATIVE_LOGIC, tools, imperative=False)
    assert trace.ok, trace.error
    tools_called = [(c.tool, c.args.get("time")) for c in trace.calls]
    assert tools_called == [
        ("query", "0:12"),
        ("query", "0:40-0:41"),
        ("query", "0:59"),
        ("answer", None),
    ]
    failed = trace.calls[2]
    assert failed.error == "0:59 is past the end of the video" and failed.result is None
    # the failed query gave None, which answer() drops; the note string is kept
    assert trace.calls[3].args["evidence"] == [{"call": 1}, {"call": 2}, "2 notes"]
    assert tools.log[-1] == ("answer", "Which colour?", 3, None)


def test_declarative_logic_refuses_find():
    trace = run_logic_source(IMPERATIVE_LOGIC, FakeTools(), imperative=False)
    assert trace.status == "refused" and trace.calls == ()
    assert trace.error.line == 2
    assert "video.find is not allowed in the declarative variant" in trace.error.reason


def test_evidence_is_opaque():
    src = 'e = video.query("0:01", "q", "visual")\nreturn [str(e), len([e, e]), e == e]'
    trace = run_logic_source(src, FakeTools(), imperative=False)
    assert trace.ok and trace.returned == "['<evidence>', 2, True]"
    refused = run_logic_source(
        'e = video.query("0:01", "q", "visual")\nt = e.text', FakeTools(), False
    )
    assert refused.error.reason == "attribute access 'text' is not allowed"


def test_plain_statements_and_trailing_main_call_are_accepted():
    for src in (
        "x = 1\nreturn x + 1",
        "def main(video):\n    return 2\nmain(video)",
        "def main(video):\n    return 2\nresult = main(video)",
    ):
        trace = run_logic_source(src, FakeTools(), imperative=True)
        assert trace.ok and trace.returned == "2", (src, trace.error)


IMPERATIVE_NARRATIVE = (
    '1. find("the man picks up the cup", "visual")\n'
    '2. describe(#1, "visual", "What colour is the cup?")\n'
    '3. describe("0:12-0:15", "audio", "What does the \\"woman\\" say?")\n'
    '4. describe(#2, "audio", "Is anything heard?")\n'
    '5. synthesize("Which option fits the evidence? Cite it by number.")\n'
)
DECLARATIVE_NARRATIVE = (
    '1. describe("0:59", "visual", "What is shown?")\n'
    '2. describe("1:02:03-1:02:09", "audio", "What is said?")\n'
    '3. synthesize("Answer.")'
)


def test_imperative_narrative_runs():
    tools = FakeTools()
    trace = run_narrative_source(IMPERATIVE_NARRATIVE, tools, imperative=True, options=["A", "B"])
    assert trace.ok, trace.error
    assert [(c.tool, c.args.get("time"), c.line) for c in trace.calls] == [
        ("find", None, 1),
        ("query", "0:12-0:15", 2),
        ("query", "0:40-0:41", 2),
        ("query", "0:12-0:15", 3),
        ("query", "0:12-0:15", 4),
        ("query", "0:40-0:41", 4),
        ("answer", None, 5),
    ]
    assert trace.calls[3].args["question"] == 'What does the "woman" say?'
    assert trace.calls[-1].args == {
        "question": "Which option fits the evidence? Cite it by number.",
        "evidence": [{"call": k} for k in range(2, 7)],
        "options": ["A", "B"],
    }
    assert trace.answer == "B. The cup is red." and trace.style == "narrative"


def test_declarative_narrative_runs_and_refuses_find():
    trace = run_narrative_source(DECLARATIVE_NARRATIVE, FakeTools(), imperative=False)
    assert trace.ok and [c.tool for c in trace.calls] == ["query", "query", "answer"]
    assert trace.calls[0].error is not None and trace.calls[2].args["evidence"] == [{"call": 2}]
    refused = run_narrative_source(IMPERATIVE_NARRATIVE, FakeTools(), imperative=False)
    assert refused.status == "refused" and refused.error.line == 1
    assert "find is not allowed in the declarative variant" in refused.error.reason


# ---------------------------------------------------------------- hostile plans

BIG = Limits(max_source_chars=10**7)
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
    ("x = " + "1+" * 10_000 + "1", "nested too deeply to parse", BIG),
    ("x = " + "-" * 100_000 + "1", "nested too deeply to parse", BIG),
    ("x = " + "not " * 3000 + "1", "nested too deeply to parse", BIG),
    ("x = " + "1+" * 300 + "1", "nested deeper than 64 levels (limit max_depth)", Limits()),
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


# ---------------------------------------------------------------- limits are configuration


def test_limits_are_configuration_and_recorded():
    src = "\n".join(f'video.query("0:0{i}", "q", "visual")' for i in range(4))
    limits = Limits(max_tool_calls=3)
    trace = run_logic_source(src, FakeTools(), imperative=False, limits=limits)
    assert trace.status == "stopped" and trace.error.line == 4
    assert trace.error.reason == "more than 3 tool calls (limit max_tool_calls)"
    assert len(trace.calls) == 3 and trace.limits == limits
    assert trace.to_dict()["limits"]["max_tool_calls"] == 3
    assert run_logic_source(src, FakeTools(), imperative=False, limits=Limits(max_tool_calls=4)).ok
    plan = (
        '1. describe("0:01", "visual", "a")\n2. describe("0:02", "visual", "b")\n3. synthesize("c")'
    )
    stopped = run_narrative_source(
        plan, FakeTools(), imperative=False, limits=Limits(max_tool_calls=2)
    )
    assert stopped.status == "stopped" and stopped.error.line == 3 and len(stopped.calls) == 2
    with pytest.raises(ValueError):
        Limits(max_steps=0)


def test_steps_and_wall_time_stop_a_busy_loop():
    steps = run_logic_source("while True:\n    pass", FakeTools(), True, Limits(max_steps=100))
    assert (
        steps.status == "stopped" and "more than 100 steps (limit max_steps)" in steps.error.reason
    )
    ticks = iter(range(10**9))
    clock = lambda: next(ticks) * 0.01  # noqa: E731 - a fake clock: 10 ms per reading
    big = Limits(max_steps=10**9, max_iterations=10**9, max_seconds=1.0)
    slow = run_logic_source("while True:\n    pass", FakeTools(), True, big, clock=clock)
    assert (
        slow.status == "stopped" and slow.error.reason == "more than 1 seconds (limit max_seconds)"
    )


def test_limits_bound_the_plan_not_the_plain_program():
    src = "x = [i * 2 for i in range(100) if i % 2 == 0]\nreturn len(x) + x[-1]"
    assert run_logic_source(src, FakeTools(), True).returned == "246"
    stopped = run_logic_source(src, FakeTools(), True, Limits(max_iterations=50))
    assert stopped.status == "stopped" and "limit max_iterations" in stopped.error.reason


def test_parse_logic_returns_a_plan_or_an_error_value():
    assert not isinstance(parse_logic("x = 1", imperative=True), ProgramError)
    err = parse_logic("x = 1\ny = ().__class__", imperative=True)
    assert isinstance(err, ProgramError)
    assert err.message == "refused: line 2: attribute access '__class__' is not allowed"


# ---------------------------------------------------------------- narrative regex

NARROW = 5  # lines, for the property tests: the regex grows linearly, the checks stay fast
_RX = {imp: re.compile(narrative_regex(imp, NARROW)) for imp in (True, False)}
_RX_NO_TIMES = re.compile(narrative_regex(True, NARROW, allow_times=False))


def _agree(text: str, imperative: bool) -> bool:
    matched = _RX[imperative].fullmatch(text) is not None
    parsed = isinstance(parse_narrative(text, imperative, NARROW), NarrativePlan)
    strict_matched = _RX_NO_TIMES.fullmatch(text) is not None
    strict_parsed = isinstance(
        parse_narrative(text, True, NARROW, allow_times=False), NarrativePlan
    )
    return matched == parsed and strict_matched == strict_parsed


def test_regex_uses_only_plain_features():
    rx = narrative_regex(True, 32)
    for feature in ("(?=", "(?!", "(?<", "(?P", "\\1"):
        assert feature not in rx
    assert re.search(r"(?<!\\)[*+]", rx) is None  # every repetition is bounded
    assert re.search(r"\{\d+,\}", rx) is None


def test_valid_plans_match_and_parse():
    for text, imp in [
        (IMPERATIVE_NARRATIVE, True),
        (DECLARATIVE_NARRATIVE, False),
        (DECLARATIVE_NARRATIVE, True),
        ('1. synthesize("x")', False),
        ('1. describe("0:01", "audio","x")\n2. synthesize("y")\n', False),
    ]:
        assert _RX[imp].fullmatch(text), text
        plan = parse_narrative(text, imp, NARROW)
        assert isinstance(plan, NarrativePlan), plan
    assert re.fullmatch(narrative_regex(True, 32), IMPERATIVE_NARRATIVE)


MALFORMED = [
    "",
    '1. synthesize("x")\n\n',
    '1. synthesize("")',  # empty string
    '1. synthesize("' + "a" * 301 + '")',  # too long
    '1. synthesize("a"b")',  # unescaped quote
    '1. synthesize("a\\n")',  # only \" and \\ escapes
    '2. synthesize("x")',  # wrong number
    '1.synthesize("x")',
    '1. synthesize("x") ',
    '1. find("x", "visual")',  # must end with synthesize
    '1. describe("0:60", "visual", "x")\n2. synthesize("y")',  # seconds >= 60
    '1. describe("0:1", "visual", "x")\n2. synthesize("y")',
    '1. describe("0:01", "smell", "x")\n2. synthesize("y")',
    '1. describe("0:01", "visual")\n2. synthesize("y")',
    '1. describe(#2, "visual", "x")\n2. synthesize("y")',
    '1. describe("0:01", "visual", "x")\r\n2. synthesize("y")',
    "\n".join(f'{i}. describe("0:01", "visual", "x")' for i in range(1, NARROW + 1))
    + f'\n{NARROW + 1}. synthesize("y")',
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_plans_neither_match_nor_parse(text):
    for imp in (True, False):
        assert _RX[imp].fullmatch(text) is None
        assert isinstance(parse_narrative(text, imp, NARROW), ProgramError)


_piece = st.sampled_from(
    [
        "find(",
        "describe(",
        "synthesize(",
        '"',
        '", "',
        ", ",
        '"visual"',
        '"audio"',
        "#1",
        "#2",
        "#3",
        "#0",
        "0:12",
        "1:02:03",
        "0:12-0:15",
        "9:99",
        "-",
        ")",
        "x",
        "a b",
        '\\"',
        "\\\\",
        "\\",
        "\n",
        " ",
        "1. ",
        "2. ",
    ]
)
_call = st.one_of(
    st.builds(
        lambda q, m: f'find("{q}", "{m}")',
        st.text('ab \\"#', min_size=0, max_size=4),
        st.sampled_from(["visual", "audio", "x"]),
    ),
    st.builds(
        lambda t, m, q: f'describe({t}, "{m}", "{q}")',
        st.sampled_from(
            ['"0:12"', '"0:12-1:15"', '"1:00:00"', "#1", "#2", "#3", "#9", '"0:99"', '""']
        ),
        st.sampled_from(["visual", "audio"]),
        st.text('ab\\"', min_size=0, max_size=3),
    ),
    st.builds(lambda q: f'synthesize("{q}")', st.text('ab\\"\n', min_size=0, max_size=3)),
    st.lists(_piece, max_size=6).map("".join),
)


@st.composite
def _plans(draw):
    calls = draw(st.lists(_call, min_size=0, max_size=NARROW + 1))
    numbered = draw(st.booleans())
    lines = [
        (f"{i}. " if numbered or draw(st.booleans()) else f"{draw(st.integers(0, 9))}. ") + c
        for i, c in enumerate(calls, start=1)
    ]
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", " "]))


@settings(max_examples=400, deadline=None)
@given(_plans(), st.booleans())
def test_parse_agrees_with_the_regex(text, imperative):
    assert _agree(text, imperative), text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.booleans())
def test_parse_agrees_with_the_regex_on_noise(text, imperative):
    assert _agree(text, imperative)


def test_every_parsed_timestamp_reads_back_with_the_citation_parser():
    plan = parse_narrative(DECLARATIVE_NARRATIVE, False, NARROW)
    assert isinstance(plan, NarrativePlan)
    for step in plan.steps:
        if step.timestamps:
            assert all(parse_time(t)[1] is None for t in step.timestamps.split("-"))
    for seconds in (0, 9.5, 59.96, 61, 3725):
        assert parse_time(format_seconds(seconds))[1] is None


def test_regex_builds_an_outlines_core_index():
    oc = pytest.importorskip("outlines_core")
    import string

    chars = [c for c in string.printable if c not in "\x0b\x0c"]
    vocabulary = oc.Vocabulary(len(chars), {c: [i] for i, c in enumerate(chars)})
    oc.Index(narrative_regex(True, 2), vocabulary)


# ---------------------------------------------------------------- robustness


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


# ---------------------------------------------------------------- imperative plans that may name no times

PROMPT_NARRATIVE = (
    '1. find("a man picks up a cup", "visual")\n'
    '2. describe(#1, "visual", "What colour is the cup?")\n'
    '3. find("a woman speaks", "audio")\n'
    '4. describe(#3, "audio", "What does she say?")\n'
    '5. synthesize("Choose the option that matches the cup\'s colour and her words.")'
)
PROMPT_LOGIC = """def main(video):
    notes = []
    for span in video.find("a man picks up a cup", "visual"):
        notes.append(video.query(span, "What colour is the cup?", "visual"))
    for span in video.find("a woman speaks", "audio"):
        notes.append(video.query(span, "What does she say?", "audio"))
    return answer("Which option fits?", notes, ["A", "B", "C", "D"])
"""


def test_narrative_without_times():
    rx = narrative_regex(True, 32, allow_times=False)
    assert re.fullmatch(rx, PROMPT_NARRATIVE) and not re.fullmatch(rx, IMPERATIVE_NARRATIVE)
    trace = run_narrative_source(PROMPT_NARRATIVE, FakeTools(), True, allow_times=False)
    assert trace.ok and [c.tool for c in trace.calls] == [
        "find",
        "query",
        "query",
        "find",
        "query",
        "query",
        "answer",
    ]
    refused = run_narrative_source(IMPERATIVE_NARRATIVE, FakeTools(), True, allow_times=False)
    assert refused.status == "refused" and refused.error.line == 3
    assert "name no times yourself in the imperative variant" in refused.error.reason
    # declarative plans always name their times: the switch does not apply to them
    assert run_narrative_source(DECLARATIVE_NARRATIVE, FakeTools(), False, allow_times=False).ok


def test_logic_without_times():
    assert run_logic_source(PROMPT_LOGIC, FakeTools(), True, allow_times=False).ok
    literal = run_logic_source(IMPERATIVE_LOGIC, FakeTools(), True, allow_times=False)
    assert literal.status == "refused" and literal.error.line == 7
    assert "video.query: name no times yourself" in literal.error.reason
    computed = 't = "0:0" + "1"\nvideo.query(t, "q", "visual")'
    trace = run_logic_source(computed, FakeTools(), True, allow_times=False)
    assert (
        trace.status == "failed"
        and trace.calls == ()
        and "query a span from video.find" in trace.error.reason
    )
    assert run_logic_source(computed, FakeTools(), False, allow_times=False).ok
