"""The newer families end to end on vLLM's CPU build, one engine start per model for the whole
module: Gemma 4, Qwen3-VL, Qwen2-Audio and Qwen2.5-Omni answer the sample questions (each given
what it can take), then score with attribution routed by modality (visual facts to Qwen3-VL,
audio facts to Qwen2-Audio, facts citing both to Gemma 4, which cannot take audio on this
engine and refuses them with the reason). Random weights: the verdicts mean nothing, the
routes, the media and the records are what is checked."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import ROOT, require_model
from murgat_local.config import GenerateConfig, RunConfig
from murgat_local.engines import LazyEngine, load_preset
from murgat_local.pipeline.generating import GenerateRunner
from murgat_local.pipeline.runner import Runner

pytestmark = [pytest.mark.engine, pytest.mark.slow]

RESPONDERS = ["tiny-gemma4", "tiny-qwen3-vl", "tiny-qwen2-audio", "tiny-qwen2.5-omni"]
TEXT = "smollm2-135m-instruct"
MIXED = {"id": "mixed", "video": "colors", "model": "sample-model-c", "question": "What changes at 0:01?",
         "options": ["A. the screen turns green", "B. nothing"], "answer": "A",
         "model_generation": "Reasoning: The screen turns green while the tone changes (visual, 0:01-0:02; "
                             "audio, 0:01-0:02). The screen is green (visual, 0:01). A tone plays (audio, 0:01). "
                             "So A.\nAnswer: A"}


@pytest.fixture(scope="module")
def engines():
    """Shared by generation and scoring: each model starts once, when a call first needs it."""
    for m in [*RESPONDERS, TEXT]:
        require_model(m)
    held = {m: LazyEngine("vllm", load_preset(m), temperature=0.0, seed=0) for m in [*RESPONDERS, TEXT]}
    yield held
    for e in held.values():
        e.close()


@pytest.fixture(scope="module")
def generated(engines, media_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    # The first question is enough (colours and a tone): the media each responder gets is the point.
    config = GenerateConfig(models=RESPONDERS, strategies=["base"], sampling={"max_tokens": 24}, limit=1)
    runner = GenerateRunner(config, media_root, out, engines={m: engines[m] for m in RESPONDERS})
    try:
        result = runner.run(ROOT / "samples" / "questions.jsonl")
    finally:
        runner.close(engines=False)
    return out, result


def rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


def test_each_responder_gets_what_it_can_take_and_its_row_says_so(generated):
    out, result = generated
    media = {}
    for m in RESPONDERS:
        got = rows(out / f"{m}__base" / "responses.jsonl")
        assert [r["status"] for r in got] == ["ok"] * len(got), [r.get("error") for r in got]
        media[m] = next(r["media"] for r in got if r["id"] == "q-after-green")  # colours with a tone
    omni, vl, audio, gemma = (media[m] for m in ("tiny-qwen2.5-omni", "tiny-qwen3-vl", "tiny-qwen2-audio",
                                                 "tiny-gemma4"))
    assert omni["heard_audio"] and omni["saw_video"] and not omni["visual"]["as_images"]
    # a video model without audio: the clip alone
    assert vl["saw_video"] and not vl["heard_audio"] and not vl["visual"]["as_images"]
    assert "takes no audio" in vl["audio_missing"]
    # an audio-only model: the soundtrack alone
    assert audio["heard_audio"] and not audio["saw_video"] and audio["visual"] is None
    assert "saw nothing" in audio["visual_missing"] and audio["audio"]["seconds"] > 0
    # Gemma 4 takes audio, but not on vLLM's CPU build: planned without it, and recorded
    assert gemma["saw_video"] and not gemma["heard_audio"] and "takes no audio" in gemma["audio_missing"]


def test_attribution_routed_by_modality_with_each_judge_in_its_cache_keys(generated, engines, media_root, tmp_path):
    responses = tmp_path / "responses.jsonl"
    lines = (ROOT / "samples" / "responses.jsonl").read_text().splitlines()[:2]  # visual and audio citations
    responses.write_text("\n".join([*lines, json.dumps(MIXED)]) + "\n")
    cfg = RunConfig(judge="tiny-gemma4", verifier=TEXT, decomposer=TEXT, entailer_visual="tiny-qwen3-vl",
                    entailer_audio="tiny-qwen2-audio", decontextualize=False, max_failed_calls=1.0,
                    bootstrap_resamples=0)
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines)
    result = runner.run(responses)  # closes nothing: the engines are the module's
    summary = result.summary
    routes = summary["stages"]["entail"]["routes"]
    assert summary["entail_routes"] == {"visual": "tiny-qwen3-vl", "audio": "tiny-qwen2-audio"}
    assert routes["visual"]["model"] == "tiny-qwen3-vl" and routes["visual"]["model_calls"] > 0
    assert routes["audio"]["model"] == "tiny-qwen2-audio" and routes["audio"]["model_calls"] > 0
    assert routes["mixed"]["model"] == "tiny-gemma4"
    assert summary["stages"]["entail"]["model_calls"] == sum(r["model_calls"] for r in routes.values())
    # a fact citing both modalities goes to Gemma 4, which cannot take audio here: refused, with why
    recs = {r["id"]: r for r in rows(result.records_path)}
    errors = [v["error"] for s in recs["mixed"]["trace"]["sentences"] for f in s.get("facts", [])
              for v in [f["joint"]] if v and v.get("error")]
    assert errors and all("cannot take audio on this engine" in e and "oneDNN" in e for e in errors), errors
    assert routes["mixed"]["errors"] >= len(errors) and routes["mixed"]["model_calls"] == 0
    # every verdict is cached under the judge that gave it
    judges = {r[0] for r in sqlite3.connect(cfg.cache or tmp_path / "out" / "verdicts.sqlite").execute(
        "SELECT DISTINCT judge FROM verdicts WHERE stage = 'entail'")}
    assert judges == {engines["tiny-qwen3-vl"].identity, engines["tiny-qwen2-audio"].identity}
    assert summary["warnings"] == []
