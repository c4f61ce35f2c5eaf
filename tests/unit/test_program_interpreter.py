"""Program-aided plans: the logic interpreter and the narrative runner, against a fake toolset.

Pure logic: no engine, no media. An audit hook records file opens (and exec / process / socket
events) while hostile plans are checked and run, so "nothing opened a file" is asserted, not hoped.
"""

from __future__ import annotations

import re

import pytest
from support.program_tools import DECLARATIVE_NARRATIVE, IMPERATIVE_NARRATIVE, FakeTools

from murgat_local.generate.program import (
    Limits,
    ProgramError,
    Tools,
    narrative_regex,
    parse_logic,
    run_logic_source,
    run_narrative_source,
)


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
