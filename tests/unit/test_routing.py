"""Attribution judges routed by modality (--entailer-visual / --entailer-audio): which judge each
fact goes to, the checks at start, and what summary.json, the dry run and the cache say. The
protocol's logic runs on deterministic oracle judges here; tests/e2e/test_families_e2e.py routes
real engines (Qwen3-VL, Qwen2-Audio, Gemma 4) on vLLM's CPU build."""

from __future__ import annotations

import json

import pytest
from support.fakes import OracleEngine
from support.routing_rows import VISUAL
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.judges.calls import Call
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.routing import route_of
from murgat_local.pipeline.runner import Runner

ROW = {
    "id": "r1",
    "video": "colors",
    "model_generation": "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). "
    "The screen is red while a tone plays (visual, 0:00; audio, 0:00). So A.\nAnswer: A",
}


def oracles():
    return {
        "main": OracleEngine("main", ("text", "image", "video")),  # takes no audio
        "eyes": OracleEngine("eyes", ("text", "image", "video"), salt="eyes"),
        "ears": OracleEngine("ears", ("text", "audio"), salt="ears"),
    }


def test_a_call_goes_to_the_route_of_the_modality_it_cites():
    def call(*modalities):
        return Call(
            template=None, user="", media_keys=tuple(("h", m, 0.0, 1.0) for m in modalities)
        )

    assert route_of(call("visual", "visual")) == "visual"
    assert route_of(call("audio")) == "audio"
    assert route_of(call("visual", "audio")) == "mixed" and route_of(call()) == "mixed"


def test_visual_facts_go_to_the_visual_judge_audio_to_the_audio_judge_both_to_the_entailer(
    tmp_path, media_root
):
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps(ROW) + "\n")
    engines = oracles()
    cfg = RunConfig(
        judge="main",
        entailer_visual="eyes",
        entailer_audio="ears",
        decontextualize=False,
        max_failed_calls=1.0,
        bootstrap_resamples=0,
    )
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines, summary=RunSummary)
    try:
        result = runner.run(responses)
        plan = runner.plan(responses)
    finally:
        runner.close()
    entail = [
        r for r in engines["eyes"].seen + engines["ears"].seen + engines["main"].seen if r.media
    ]
    assert {m.modality for r in engines["eyes"].seen for m in r.media} <= {
        "image",
        "video",
    }  # a point: a frame
    assert {m.modality for r in engines["ears"].seen for m in r.media} == {"audio"}
    mixed = [
        r for r in engines["main"].seen if r.media
    ]  # only the fact citing both, which it refuses
    assert mixed and all({m.modality for m in r.media} >= {"audio"} for r in mixed)
    routes = result.summary.stages["entail"].routes
    assert {r: v.model for r, v in routes.items()} == {
        "visual": "eyes",
        "audio": "ears",
        "mixed": "main",
    }
    assert routes["visual"].unique > 0 and routes["audio"].unique > 0 and routes["mixed"].errors > 0
    assert result.summary.entail_routes == {"visual": "eyes", "audio": "ears"}
    (rec,) = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    both = rec["trace"]["sentences"][2]["facts"][0]["joint"]
    assert "does not accept audio" in both["error"]
    # the dry run counts each route against its own judge's cache: everything is there now
    assert (
        plan["entail"]["routes"]["visual"]["to_run"]
        == plan["entail"]["routes"]["audio"]["to_run"]
        == 0
    )
    assert len(entail) == routes["visual"].unique + routes["audio"].unique + len(mixed)
    detail = json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]["judges"][
        "entail"
    ]
    assert set(detail["detail"]["routes"]) == {"visual", "audio", "mixed"}


@pytest.mark.parametrize(
    "config, said",
    [
        ({"judge": "ears"}, "model 'ears' judges attribution but cannot take visual input"),
        ({"judge": "main"}, "--entailer-audio MODEL"),
        (
            {"judge": "main", "entailer_audio": "eyes"},
            "--entailer-audio eyes: model 'eyes' cannot take audio input",
        ),
        ({"judge": "ears", "entailer_visual": "ears"}, "--entailer-visual ears"),
    ],
)
def test_a_judge_that_cannot_take_what_the_input_cites_is_refused_at_start(
    tmp_path, media_root, config, said
):
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps(ROW) + "\n")
    runner = Runner(
        RunConfig(**config), media_root, tmp_path / "out", engines=oracles(), summary=RunSummary
    )  # the input unread
    try:
        with pytest.raises(ValueError, match=said.replace("(", r"\(")):
            runner.check_input(responses)
    finally:
        runner.close()


AUDIO = {
    "id": "a1",
    "video": "colors",
    "model_generation": "A tone plays (audio, 0:00-0:01). The screen is red while a tone plays (visual, 0:00; audio, 0:00). "
    "Another tone plays (audio, 0:01; audio, 0:02). So A.\nAnswer: A",
}


def test_an_image_only_judge_scores_responses_that_cite_only_visual_segments(tmp_path, media_root):
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps(VISUAL) + "\n")
    eyes = OracleEngine("eyes", ("text", "image"))  # Gemma-3's modalities: frames, never audio
    runner = Runner(
        RunConfig(judge="eyes", decontextualize=False, bootstrap_resamples=0),
        media_root,
        tmp_path / "out",
        engines={"eyes": eyes},
        summary=RunSummary,
    )
    try:
        runner.check_input(responses)
        result = runner.run(responses)
    finally:
        runner.close()
    assert result.exit_code == 0 and result.summary.stages["entail"].errors == 0
    (rec,) = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    assert rec["status"] == "ok" and rec["precision"] == 1.0


def test_the_refusal_counts_the_sentences_and_citations_that_cite_the_modality(
    tmp_path, media_root
):
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        "\n".join(json.dumps(r) for r in (VISUAL, AUDIO, {**AUDIO, "id": "a2"})) + "\n"
    )
    runner = Runner(
        RunConfig(judge="main"), media_root, tmp_path / "out", engines=oracles(), summary=RunSummary
    )
    try:
        with pytest.raises(ValueError) as refused:
            runner.check_input(responses)
    finally:
        runner.close()
    said = str(refused.value)
    # facts are known only after decomposition: the count is of sentences, and of their citations
    assert "6 sentences in 2 of 3 responses read cite audio segments (8 citations)" in said, said
    assert "cannot take audio input" in said and "--entailer-audio MODEL" in said


def test_audio_first_cited_after_the_first_chunk_is_refused_per_call_and_the_rest_scored(
    tmp_path, media_root
):
    responses = tmp_path / "r.jsonl"
    responses.write_text("\n".join(json.dumps(r) for r in (VISUAL, AUDIO)) + "\n")
    engines = oracles()
    cfg = RunConfig(
        judge="main",
        chunk_size=1,
        decontextualize=False,
        max_failed_calls=1.0,
        bootstrap_resamples=0,
    )
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines, summary=RunSummary)
    try:
        runner.check_input(responses)  # decided on the first chunk, which cites no audio
        result = runner.run(responses)
    finally:
        runner.close()
    visual, audio = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    assert (
        visual["status"] == "ok"
        and visual["precision"] == 1.0
        and visual["counts"]["unscored_facts"] == 0
    )
    facts = [f for s in audio["trace"]["sentences"] for f in s.get("facts", [])]
    unscored = [f["unscored"] for f in facts if f.get("unscored")]
    # every fact citing audio is an error with the reason, never a NO
    assert len(unscored) == audio["counts"]["unscored_facts"] == 3, facts
    assert all("does not accept audio" in u for u in unscored)
    assert result.summary.stages["entail"].errors > 0 and result.exit_code == 0


def test_score_runs_gemma3_on_visual_citations_and_refuses_it_audio_with_the_count(
    tmp_path, media_root
):
    visual, audio = tmp_path / "v.jsonl", tmp_path / "a.jsonl"
    visual.write_text(json.dumps(VISUAL) + "\n")
    audio.write_text(json.dumps(AUDIO) + "\n")
    args = ["--media-root", str(media_root), "--judge", "tiny-gemma3", "--dry-run"]
    ran = CliRunner().invoke(app, ["score", str(visual), "--out", str(tmp_path / "v"), *args])
    assert ran.exit_code == 0 and json.loads(ran.stdout)["verifiable"]["calls"] == 3, ran.output
    refused = CliRunner().invoke(app, ["score", str(audio), "--out", str(tmp_path / "a"), *args])
    said = " ".join(refused.output.split())
    assert (
        refused.exit_code == 2
        and "3 sentences in 1 of 1 response read cite audio segments (4 citations)" in said
    )
    assert "--entailer-audio MODEL" in said, said


def test_a_route_names_one_model_and_the_flags_reach_the_config(tmp_path, media_root):
    with pytest.raises(ValueError, match="entailer_audio names one model"):
        RunConfig(entailer_audio="panel:a,b")
    (tmp_path / "r.jsonl").write_text(json.dumps(ROW) + "\n")
    out = CliRunner().invoke(
        app,
        [
            "score",
            str(tmp_path / "r.jsonl"),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path / "o"),
            "--judge",
            "tiny-qwen2-audio",
            "--dry-run",
        ],
    )
    assert out.exit_code == 2 and "--entailer-visual" in out.output, out.output
