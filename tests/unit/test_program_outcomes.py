"""What a run says about its plans: a bug in our own code is `internal`, never the plan's failure,
and is counted apart in the summary; and a plan's record stays bounded, whatever the plan did.
Runs the real generate runner on the sample media with the deterministic planner of
tests/unit/test_program_generate.py."""

from __future__ import annotations

import json

from support.program_plans import PLANS, Planner, rows, run

from murgat_local.generate import program_tools
from murgat_local.generate.program import interpreter

LOGIC = "tiny-qwen3-omni/program:logic-declarative"
FAILING = "tiny-qwen3-omni/program:logic-imperative"
NARRATIVE = "tiny-qwen3-omni/program:narrative-declarative"
KINDS = ("ok", "refused", "stopped", "failed", "internal", "no_answer", "not_run")


class _Bug(Exception):
    pass


def _counts(**given: int) -> dict:
    return {k: given.get(k, 0) for k in KINDS}


def test_an_interpreter_bug_is_internal_and_counted_apart_from_plan_failures(
    tmp_path, media_root, monkeypatch
):
    def broken(self, args, line):
        raise _Bug("x" * 10**6)

    monkeypatch.setattr(interpreter._Interpreter, "query", broken)
    plans = dict(PLANS, **{"logic-imperative": 'answer("q", [1 / 0], None)'})
    result = run(
        tmp_path,
        media_root,
        Planner(plans),
        ["program:logic-declarative", "program:logic-imperative", "program:narrative-declarative"],
        limit=2,
    )
    cells = result.summary.cells
    assert cells[LOGIC].programs == _counts(internal=2)
    assert cells[FAILING].programs == _counts(failed=2)
    assert cells[NARRATIVE].programs == _counts(
        ok=2
    )  # the narrative runner has no query method to break
    assert result.summary.programs == _counts(ok=2, failed=2, internal=2)
    logic = rows(result.outputs[LOGIC])
    assert all(r["status"] == "error" for r in logic)
    assert logic[0]["error"].startswith(
        "an internal error stopped the program (internal: line 3: _Bug in the interpreter ("
    ), logic[0]["error"]
    assert len(logic[0]["error"]) < 400 and logic[0]["program"]["trace"]["status"] == "internal"
    failing = rows(result.outputs[FAILING])
    assert (
        failing[0]["error"]
        == "the program failed (failed: line 1: ZeroDivisionError: division by zero)"
    )


def test_a_tool_bug_is_internal_and_its_message_bounded(tmp_path, media_root, monkeypatch):
    def broken(self, question, evidence, options):
        raise _Bug(("y" * 20000,) * 1000)

    monkeypatch.setattr(program_tools.VideoTools, "answer", broken)
    result = run(tmp_path, media_root, Planner(), ["program:narrative-declarative"], limit=2)
    assert result.summary.cells[NARRATIVE].programs == _counts(internal=2)
    out = rows(result.outputs[NARRATIVE])
    assert out[0]["error"].startswith("an internal error stopped the program (internal: _Bug: "), (
        out[0]["error"]
    )
    assert "a tuple of 1000 items; raised at test_program_outcomes.py:" in out[0]["error"]
    assert len(out[0]["error"]) < 400


BIG = (
    's = "a" * 20000\nev = ["e" * 600] * 64\n'
    'for i in range(64):\n    answer(s[0:1000], ev, ["A", "B", "C", "D"])\nreturn s[0:19000]'
)


def test_a_plans_record_is_bounded_in_the_rows(tmp_path, media_root):
    result = run(
        tmp_path,
        media_root,
        Planner(dict(PLANS, **{"logic-declarative": BIG})),
        ["program:logic-declarative"],
        limit=1,
        program_limits={"max_record_chars": 60_000},
    )
    (row,) = rows(result.outputs[LOGIC])
    assert row["status"] == "ok", row["error"]
    record = {
        k: v for k, v in row["program"].items() if k != "raw"
    }  # the generation itself, kept whole
    assert len(json.dumps(record)) <= 60_000
    assert record["cut"]["limit"] == 60_000 and record["cut"]["chars"] > 1_000_000
    assert record["trace"]["counts"]["tool_calls"] == 64
    assert len(record["trace"]["calls"]) == 64 - record["cut"]["calls_dropped"]
    assert result.summary.cells[LOGIC].programs == _counts(ok=1)
