"""The protocol's logic end to end on real media, with a deterministic rule-based judge."""

import json

import pytest
from support.fakes import OracleEngine

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


def write(tmp_path, rows, name="r.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return p


def run(tmp_path, media_root, rows, compat=None, engine=None, out="out", **cfg):
    engine = engine or OracleEngine()
    config = RunConfig(judge="oracle", compat=compat, **cfg)
    runner = Runner(
        config, media_root, tmp_path / out, engines={"oracle": engine}, summary=RunSummary
    )
    try:
        result = runner.run(write(tmp_path, rows))
    finally:
        runner.close()
    records = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    return result, records, engine


def R(id, video, text, **kw):
    return {"id": id, "video": video, "model_generation": text, **kw}


def test_scores_follow_the_media(tmp_path, media_root):
    rows = [
        R(
            "right",
            "colors",
            "The screen is red (visual, 0:00). The screen is green (visual, 0:01). Therefore A.\nAnswer: A",
            answer="A",
        ),
        R(
            "wrong",
            "colors",
            "The screen is red (visual, 0:05). Therefore B.\nAnswer: B",
            answer="A",
        ),
        R(
            "half",
            "colors",
            "The screen is red (visual, 0:00). The screen is blue (visual, 0:06). A cat sleeps.",
        ),
    ]
    result, recs, _ = run(tmp_path, media_root, rows)
    right, wrong, half = recs
    assert (right["coverage"], right["precision"], right["recall"], right["murgat_s"]) == (
        1.0,
        1.0,
        1.0,
        1.0,
    )
    assert (wrong["coverage"], wrong["precision"], wrong["recall"], wrong["murgat_s"]) == (
        1.0,
        0.0,
        0.0,
        0.0,
    )
    # 3 verifiable sentences, 2 cited; of 2 facts one is supported
    assert half["coverage"] == pytest.approx(2 / 3)
    assert (half["precision"], half["recall"]) == (0.5, 0.5)
    assert half["murgat_s"] == pytest.approx(2 / 3 * 0.5)
    assert right["correct"] is True and wrong["correct"] is False
    assert result.summary.murgat_s == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert result.summary.qa_accuracy == 0.5 and result.exit_code == 0


def test_strict_necessity_with_two_citations(tmp_path, media_root):
    # The frame at 0:00 is red, the one at 0:03 yellow: only the first supports the claim,
    # and the claim still holds without the second -> precision 1/2, recall 1.
    rows = [R("two", "colors", "The screen is red (visual, 0:00; visual, 0:03).")]
    _, (rec,), engine = run(tmp_path, media_root, rows)
    assert (rec["precision"], rec["recall"]) == (0.5, 1.0)
    fact = rec["trace"]["sentences"][0]["facts"][0]
    assert fact["precise"] == [True, False]
    assert fact["alone"]["0"]["value"] is True and fact["without"]["1"]["value"] is True


def test_invalid_citations_are_unsupported_not_failures(tmp_path, media_root):
    rows = [
        R("range", "colors", "The screen is red (visual, 0:00; visual, 0:40)."),
        R("no-audio", "silent", "A tone sounds (audio, 0:01). The screen is green (visual, 0:01)."),
        R("malformed", "colors", "The screen is red (visual, 0:99)."),
    ]
    result, (rng, silent, bad), _ = run(tmp_path, media_root, rows)
    assert result.exit_code == 0
    cits = rng["trace"]["sentences"][0]["citations"]
    assert cits[1]["usable"] is False and "beyond the media's duration" in cits[1]["issue"]
    assert (rng["precision"], rng["recall"]) == (0.5, 1.0)
    assert "no audio track" in silent["trace"]["sentences"][0]["citations"][0]["issue"]
    assert silent["precision"] == 0.5 and silent["coverage"] == 1.0
    assert (bad["coverage"], bad["precision"], bad["recall"]) == (1.0, 0.0, 0.0)


def test_bad_input_is_reported_per_item_and_the_run_goes_on(tmp_path, media_root):
    rows = [
        R("ok", "colors", "The screen is red (visual, 0:00)."),
        "{broken",
        R("ok", "colors", "duplicate"),
        R("empty", "colors", "  "),
        R("missing-video", "nope", "The screen is red (visual, 0:00)."),
        R("escape", "../../../etc/passwd", "The screen is red (visual, 0:00)."),
        R("truncated", "truncated", "The screen is red (visual, 0:00)."),
        {"video": "colors", "model_generation": "no id"},
        R("last", "colors", "The screen is green (visual, 0:01)."),
    ]
    result, recs, _ = run(tmp_path, media_root, rows)
    assert len(recs) == len(rows)
    assert [r["status"] for r in recs] == ["ok"] + ["error"] * 7 + ["ok"]
    reasons = [r["error"] for r in recs[1:8]]
    assert "line 2" in reasons[0] and "duplicate" in reasons[1] and reasons[2] == "empty response"
    assert "not found" in reasons[3] and "escapes the media root" in reasons[4]
    assert "cannot read" in reasons[5] and "missing field 'id'" in reasons[6]
    assert recs[-1]["murgat_s"] == 1.0
    assert result.exit_code == 1 and len(result.summary.errors_list) == 7


def test_refused_modality_is_recorded_not_scored_zero(tmp_path, media_root):
    """The entailer takes no audio (facts citing only audio are routed to another judge): a fact
    citing both modalities stays with it and is refused per call, recorded, not scored zero."""
    engine = OracleEngine(modalities=("text", "image"))
    ears = OracleEngine("ears", ("text", "audio"), salt="ears")
    rows = [
        R(
            "a",
            "colors",
            "A tone sounds over the screen (audio, 0:01; visual, 0:01). "
            "The screen is green (visual, 0:01).",
        )
    ]
    runner = Runner(
        RunConfig(judge="oracle", entailer_audio="ears"),
        media_root,
        tmp_path / "out",
        engines={"oracle": engine, "ears": ears},
        summary=RunSummary,
    )
    try:
        result = runner.run(write(tmp_path, rows))
    finally:
        runner.close()
    (rec,) = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    facts = [s["facts"][0] for s in rec["trace"]["sentences"]]
    assert "does not accept audio" in facts[0]["unscored"]
    assert rec["counts"]["unscored_facts"] == 1 and rec["precision"] == 1.0


def test_identical_requests_are_judged_once_and_rerun_makes_no_calls(tmp_path, media_root):
    text = "The screen is red (visual, 0:00). The screen is green (visual, 0:01)."
    rows = [R(f"r{i}", "colors", text) for i in range(5)]
    first, recs1, e1 = run(tmp_path, media_root, rows)
    assert first.summary.stages["entail"].unique == 2
    assert e1.stats.calls == first.summary.stages["verifiable"].unique + 1 + 2 + 2
    second, recs2, e2 = run(tmp_path, media_root, rows, engine=OracleEngine())
    assert e2.stats.calls == 0 and second.summary.segments_decoded == 0
    assert recs1 == recs2


def test_swapping_the_entailer_reruns_only_attribution(tmp_path, media_root):
    rows = [R("a", "colors", "A man waves. The screen is red (visual, 0:00).")]
    run(tmp_path, media_root, rows)
    engine_a, engine_b = OracleEngine(), OracleEngine(name="other", salt="b")
    config = RunConfig(judge="oracle", entailer="other")
    runner = Runner(
        config,
        media_root,
        tmp_path / "out",
        engines={"oracle": engine_a, "other": engine_b},
        summary=RunSummary,
    )
    try:
        result = runner.run(write(tmp_path, rows))
    finally:
        runner.close()
    assert engine_a.stats.calls == 0
    assert engine_b.stats.calls == 1
    assert result.summary.stages["entail"].model_calls == 1


# ---------------------------------------------------------------- --compat reference parity
# Expected numbers worked by hand from the reference's run_metric.py / util.py behaviour.

PARITY_TEXT = (
    "Reasoning: The screen is red (visual, 0:00; visual, 0:03). The tone plays (audio, 0:00-0:01). "
    "The screen is red (visual, 0:00; visual, 0:03). Therefore A.\nAnswer: A"
)


def test_reference_parity_precision_recall_and_repeated_sentences(tmp_path, media_root):
    _, (rec,), _ = run(
        tmp_path,
        media_root,
        [R("p", "colors", PARITY_TEXT, answer="A")],
        compat="reference",
        parse_reasoning=True,
    )
    # (the reference's --parse_reasoning invocation) repeated sentence counted once; red fact: alone YES/NO -> 0.5, joint YES -> 1; tone: 1/1
    assert rec["counts"]["sentences"] == 3 and rec["coverage"] == 1.0
    assert (rec["precision"], rec["recall"]) == (0.75, 1.0)
    assert rec["murgat_s"] == pytest.approx(2 * 0.75 / 1.75)


def test_default_mode_on_the_same_text(tmp_path, media_root):
    _, (rec,), _ = run(tmp_path, media_root, [R("p", "colors", PARITY_TEXT, answer="A")])
    # every sentence counts; strict necessity: the yellow frame is unnecessary -> 0.5 each
    assert rec["counts"]["sentences"] == 4 and rec["counts"]["verifiable"] == 3
    assert rec["precision"] == pytest.approx((0.5 + 1 + 0.5) / 3) and rec["recall"] == 1.0


def test_reference_ignores_decimal_and_spaced_timestamps(tmp_path, media_root):
    text = "The screen is green (visual, 0:01.5). The screen is blue (visual, 0:02 - 0:03). The screen is red (visual, 0:00)."
    _, (ref,), _ = run(
        tmp_path, media_root, [R("d", "colors", text)], compat="reference", out="ref"
    )
    _, (dft,), _ = run(tmp_path, media_root, [R("d", "colors", text)], out="dft")
    assert ref["coverage"] == pytest.approx(1 / 3) and dft["coverage"] == 1.0
    assert (dft["precision"], dft["recall"]) == (1.0, 1.0)


def test_reference_drops_a_fact_whose_segment_fails_to_extract(tmp_path, media_root):
    text = "The screen is red (visual, 0:00; visual, 0:40). The screen is green (visual, 0:01)."
    _, (rec,), _ = run(tmp_path, media_root, [R("x", "colors", text)], compat="reference")
    facts = [s["facts"][0] for s in rec["trace"]["sentences"]]
    assert "extraction failed" in facts[0]["unscored"]
    assert rec["coverage"] == 1.0  # the sentence still counts as cited
    assert (rec["precision"], rec["recall"]) == (1.0, 1.0)  # only the green fact is pooled


def test_summary_has_a_row_per_evaluated_model(tmp_path, media_root):
    rows = [
        R("a", "colors", "The screen is red (visual, 0:00).", model="m1"),
        R("b", "colors", "The screen is red (visual, 0:05).", model="m2"),
    ]
    result, _, _ = run(tmp_path, media_root, rows)
    assert result.summary.by_model["m1"].murgat_s == 1.0
    assert result.summary.by_model["m2"].murgat_s == 0.0
    assert result.summary.murgat_s == 0.5


REF_TEXT = (
    "<think>Let me look at it.</think>\nReasoning: The screen is red (visual, 0:00).\nAnswer: A"
)


def _sentences(rec):
    return [s["text"] for s in rec["trace"]["sentences"]]


def test_reference_default_invocation_judges_the_whole_generation(tmp_path, media_root):
    """The reference's run_metric.py without --parse_reasoning keeps the labels, the Answer line
    and the thinking as sentences; with it, only the reasoning."""
    _, (raw,), _ = run(
        tmp_path, media_root, [R("r", "colors", REF_TEXT)], compat="reference", out="raw"
    )
    assert any("Answer: A" in s for s in _sentences(raw)) and any(
        "Reasoning:" in s for s in _sentences(raw)
    )
    assert any("<think>" in s for s in _sentences(raw))
    _, (parsed,), _ = run(
        tmp_path,
        media_root,
        [R("r", "colors", REF_TEXT)],
        compat="reference",
        parse_reasoning=True,
        out="parsed",
    )
    assert _sentences(parsed) == ["The screen is red (visual, 0:00)."]
    assert raw["answer"]["predicted"] == parsed["answer"]["predicted"] == "A"
    with pytest.raises(ValueError, match="compat"):
        RunConfig(judge="x", parse_reasoning=True)


def test_reference_uses_an_inputs_own_decontextualized_text(tmp_path, media_root):
    given = "The screen is green (visual, 0:01). The screen is red (visual, 0:00)."
    rows = [R("g", "colors", REF_TEXT, decontextualized_text=given)]
    _, (rec,), engine = run(tmp_path, media_root, rows, compat="reference")
    assert _sentences(rec) == [
        "The screen is green (visual, 0:01).",
        "The screen is red (visual, 0:00).",
    ]
    assert rec["trace"]["text_given"] is True
    assert not any(r.verdict.__name__ == "RewrittenText" for r in engine.seen if r.verdict)
    # the default mode keeps its own sentence-level decontextualization
    _, (default,), _ = run(tmp_path, media_root, rows, out="default")
    assert _sentences(default) == ["The screen is red (visual, 0:00)."]
