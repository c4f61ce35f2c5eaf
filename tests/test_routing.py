"""Attribution judges routed by modality (--entailer-visual / --entailer-audio): which judge each
fact goes to, the checks at start, and what summary.json, the dry run and the cache say. The
protocol's logic runs on deterministic oracle judges here; tests/test_families_e2e.py routes
real engines (Qwen3-VL, Qwen2-Audio, Gemma 4) on vLLM's CPU build."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fakes import OracleEngine
from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.judges.calls import Call
from murgat_local.pipeline.routing import route_of
from murgat_local.pipeline.runner import Runner

ROW = {"id": "r1", "video": "colors", "model_generation":
       "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). "
       "The screen is red while a tone plays (visual, 0:00; audio, 0:00). So A.\nAnswer: A"}


def oracles():
    return {"main": OracleEngine("main", ("text", "image", "video")),  # takes no audio
            "eyes": OracleEngine("eyes", ("text", "image", "video"), salt="eyes"),
            "ears": OracleEngine("ears", ("text", "audio"), salt="ears")}


def test_a_call_goes_to_the_route_of_the_modality_it_cites():
    def call(*modalities):
        return Call(template=None, user="", media_keys=tuple(("h", m, 0.0, 1.0) for m in modalities))

    assert route_of(call("visual", "visual")) == "visual"
    assert route_of(call("audio")) == "audio"
    assert route_of(call("visual", "audio")) == "mixed" and route_of(call()) == "mixed"


def test_visual_facts_go_to_the_visual_judge_audio_to_the_audio_judge_both_to_the_entailer(tmp_path, media_root):
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps(ROW) + "\n")
    engines = oracles()
    cfg = RunConfig(judge="main", entailer_visual="eyes", entailer_audio="ears", decontextualize=False,
                    max_failed_calls=1.0, bootstrap_resamples=0)
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines)
    try:
        result = runner.run(responses)
        plan = runner.plan(responses)
    finally:
        runner.close()
    entail = [r for r in engines["eyes"].seen + engines["ears"].seen + engines["main"].seen if r.media]
    assert {m.modality for r in engines["eyes"].seen for m in r.media} <= {"image", "video"}  # a point: a frame
    assert {m.modality for r in engines["ears"].seen for m in r.media} == {"audio"}
    mixed = [r for r in engines["main"].seen if r.media]  # only the fact citing both, which it refuses
    assert mixed and all({m.modality for m in r.media} >= {"audio"} for r in mixed)
    routes = result.summary["stages"]["entail"]["routes"]
    assert {r: v["model"] for r, v in routes.items()} == {"visual": "eyes", "audio": "ears", "mixed": "main"}
    assert routes["visual"]["unique"] > 0 and routes["audio"]["unique"] > 0 and routes["mixed"]["errors"] > 0
    assert result.summary["entail_routes"] == {"visual": "eyes", "audio": "ears"}
    (rec,) = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    both = rec["trace"]["sentences"][2]["facts"][0]["joint"]
    assert "does not accept audio" in both["error"]
    # the dry run counts each route against its own judge's cache: everything is there now
    assert plan["entail"]["routes"]["visual"]["to_run"] == plan["entail"]["routes"]["audio"]["to_run"] == 0
    assert len(entail) == routes["visual"]["unique"] + routes["audio"]["unique"] + len(mixed)
    detail = json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]["judges"]["entail"]
    assert set(detail["detail"]["routes"]) == {"visual", "audio", "mixed"}


@pytest.mark.parametrize("config, said", [
    ({"judge": "ears"}, "model 'ears' judges attribution but cannot take visual input"),
    ({"judge": "main"}, "--entailer-audio MODEL"),
    ({"judge": "main", "entailer_audio": "eyes"}, "--entailer-audio eyes: model 'eyes' cannot take audio input"),
    ({"judge": "ears", "entailer_visual": "ears"}, "--entailer-visual ears"),
])
def test_a_judge_that_cannot_take_what_it_would_be_sent_is_refused_at_start(tmp_path, media_root, config, said):
    with pytest.raises(ValueError, match=said.replace("(", r"\(")):
        Runner(RunConfig(**config), media_root, tmp_path / "out", engines=oracles())


def test_a_route_names_one_model_and_the_flags_reach_the_config(tmp_path, media_root):
    with pytest.raises(ValueError, match="entailer_audio names one model"):
        RunConfig(entailer_audio="panel:a,b")
    (tmp_path / "r.jsonl").write_text(json.dumps(ROW) + "\n")
    out = CliRunner().invoke(app, ["score", str(tmp_path / "r.jsonl"), "--media-root", str(media_root),
                                   "--out", str(tmp_path / "o"), "--judge", "tiny-qwen2-audio", "--dry-run"])
    assert out.exit_code == 2 and "--entailer-visual" in out.output, out.output
