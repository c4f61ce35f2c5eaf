"""Program-aided strategies in `murgat generate`, with a deterministic planner that writes fixed
plans and answers the tools by rule (the real engines run in tests/e2e/test_program_e2e.py): plans
run against the real media and cache, tool calls are batched in rounds, and the response is
written from the calls that ran."""

from __future__ import annotations

import re

import pytest
from support.program_plans import PLANS, Planner, rows, run

from murgat_local.generate.program import Evidence
from murgat_local.generate.program.render import Synthesized, expand_indices, render_response
from murgat_local.generate.strategies import parse_strategy
from murgat_local.pipeline.rounds import RoundBatcher
from murgat_local.text.citations import parse_citations


def test_strategy_names():
    s = parse_strategy("program:logic-imperative")
    assert (s.label, s.prompt, s.style, s.imperative) == (
        "program:logic-imperative",
        "program_logic_imperative",
        "logic",
        True,
    )
    with pytest.raises(ValueError, match="program:narrative-declarative"):
        parse_strategy("program:logic")


@pytest.mark.parametrize("variant", sorted(PLANS))
def test_every_variant_runs_and_its_citations_are_the_calls_that_ran(tmp_path, media_root, variant):
    engine = Planner()
    result = run(tmp_path, media_root, engine, [f"program:{variant}"])
    out = rows(result.outputs[f"tiny-qwen3-omni/program:{variant}"])
    assert len(out) == 6
    ok = [r for r in out if r["status"] == "ok"]
    assert len(ok) == 6, [r["error"] for r in out]
    for r in ok:
        trace = r["program"]["trace"]
        assert trace["status"] == "ok"
        queried = [
            (c["args"]["modality"], f"({c['args']['modality']}, {c['args']['time']})")
            for c in trace["calls"]
            if c["tool"] == "query" and c["error"] is None
        ]
        cited = [(c.modality, c.raw) for c in parse_citations(r["model_generation"])]
        # every observation cites the span its call cut, in order; the synthesis cites only those
        assert queried and cited[: len(queried)] == queried
        assert set(cited) <= set(queried)
        assert all(c.valid for c in parse_citations(r["model_generation"]))
        assert "9:99" not in r["model_generation"]  # a citation the model wrote itself is dropped
        assert r["model_generation"].endswith("Answer: B") and r["predicted"] == "B"
        assert (
            r["program"]["time"]["model_s"] >= 0
            and r["program"]["trace"]["limits"]["max_plan_lines"] == 12
        )
        parsed = r["program"]["parsed"]
        assert (
            ("video.query(" in parsed)
            if variant.startswith("logic")
            else parsed[-1]["tool"] == "synthesize"
        )
    if variant == "logic-declarative":  # 9:00 is past the 10 s video: a failed call, never a cut
        bad = [c for c in ok[0]["program"]["trace"]["calls"] if c["error"]]
        assert len(bad) == 1 and "beyond the media's duration" in bad[0]["error"]
    if variant.endswith("imperative"):  # only the confirmed candidate is queried
        calls = ok[0]["program"]["trace"]["calls"]
        assert [c["tool"] for c in calls] == ["find", "query", "answer"]
        assert calls[1]["args"]["time"] == "0:02-0:03"


def test_tool_calls_of_all_items_share_rounds_and_are_cached(tmp_path, media_root):
    engine = Planner()
    run(tmp_path, media_root, engine, ["program:narrative-declarative"], out="a", batch_size=64)
    # 6 plans in one batch, then round 1 (first describe of each item), round 2, synthesize
    # (not for the silent video nor the 4.0 s one: their `0:05` audio describe is refused)
    assert engine.batches[0] == 6 and max(engine.batches[1:]) >= 4
    again = Planner()
    run(tmp_path, media_root, again, ["program:narrative-declarative"], out="a", batch_size=64)
    assert again.seen == []  # a finished run reruns from the cache


def test_a_plan_that_does_not_parse_is_that_items_error(tmp_path, media_root):
    bad = dict(
        PLANS,
        **{
            "logic-declarative": "import os\nos.system('rm -rf /')",
            "narrative-declarative": "1. describe(0:01)",
        },
    )
    engine = Planner(bad)
    result = run(
        tmp_path, media_root, engine, ["program:logic-declarative", "program:narrative-declarative"]
    )
    logic = rows(result.outputs["tiny-qwen3-omni/program:logic-declarative"])
    assert all(r["status"] == "error" for r in logic)
    assert (
        "refused" in logic[0]["error"]
        and "import" in logic[0]["error"]
        and "line 1" in logic[0]["error"]
    )
    assert logic[0]["program"]["trace"]["calls"] == []
    narrative = rows(result.outputs["tiny-qwen3-omni/program:narrative-declarative"])
    # the plan breaks the grammar it was asked for: an unparsed generation, the item's error
    assert all(r["status"] == "error" and "could not be written" in r["error"] for r in narrative)
    assert result.exit_code == 1


def test_render_expands_indices_and_drops_model_written_citations():
    e1 = Evidence("The screen is green (visual, 0:09).", "0:02-0:03", "visual")
    e2 = Evidence("A tone is heard", "0:05", "audio")
    text = render_response(
        [e1, e2],
        Synthesized(
            "Green [1] and a tone [2], not [3] (audio, 0:01).", "B", (e1, e2, "a plain note")
        ),
    )
    assert text == (
        "Reasoning: The screen is green (visual, 0:02-0:03). A tone is heard (audio, 0:05). "
        "Green (visual, 0:02-0:03) and a tone (audio, 0:05), not.\nAnswer: B"
    )
    assert expand_indices("[1][2]", (e1, e2)) == "(visual, 0:02-0:03) (audio, 0:05)"


def test_round_batcher_gathers_one_call_per_live_program_per_round():
    sent = []

    def send(calls):
        sent.append(list(calls))
        return [f"out:{c}" for c in calls]

    def job(n):
        def run(ask):
            got = []
            for k in range(n):
                got += ask([f"{n}.{k}"])
            return got

        return run

    results = RoundBatcher(send).run([job(3), job(1), job(2)])
    assert results == [["out:3.0", "out:3.1", "out:3.2"], ["out:1.0"], ["out:2.0", "out:2.1"]]
    assert sent == [["3.0", "1.0", "2.0"], ["3.1", "2.1"], ["3.2"]]


def test_the_narrative_plan_is_generated_under_its_grammar(tmp_path, media_root):
    engine = Planner()
    run(tmp_path, media_root, engine, ["program:narrative-imperative", "program:logic-imperative"])
    plans = [r for r in engine.seen if "You plan how to answer" in (r.system or "")]
    assert plans and all(
        r.pattern and re.fullmatch(r.pattern, PLANS["narrative-imperative"]) for r in plans
    )
    # imperative narrative plans may not name times: the grammar has no room for one
    assert not re.fullmatch(plans[0].pattern, PLANS["narrative-declarative"])
    logic = [r for r in engine.seen if "by writing a small program" in (r.system or "")]
    assert logic and all(r.pattern is None for r in logic)
