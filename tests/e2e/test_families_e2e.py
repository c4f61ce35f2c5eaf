"""The newer families end to end on vLLM's CPU build, one engine start per model for the whole
module: the engine checks every test model passes, then Gemma 4, Qwen3-VL, Qwen2-Audio and
Qwen2.5-Omni answer the sample questions (each given what it can take), then score with
attribution routed by modality (visual facts to Qwen3-VL,
audio facts to Qwen2-Audio, facts citing both to Gemma 4, which cannot take audio on this
engine and refuses them with the reason). Random weights: the verdicts mean nothing, the
routes, the media and the records are what is checked."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import numpy as np
import pytest
from support.engine_checks import CLAIM, FAMILIES, _check_every_modality, _check_structured_types
from support.paths import ROOT, require_model
from support.reach_checks import check_reach
from support.route_checks import record_route

from murgat_local.config import RunConfig
from murgat_local.engines import (
    AudioPart,
    ImagePart,
    LazyEngine,
    Request,
    Sampling,
    VideoPart,
    close_all,
    load_preset,
)
from murgat_local.engines.expect import PartTokens
from murgat_local.engines.reach import placeholder_tokens
from murgat_local.engines.render import ChatRenderer
from murgat_local.generate_config import GenerateConfig
from murgat_local.judges import JudgeRequest, YesNo, load_prompt
from murgat_local.judges.calls import Call
from murgat_local.metrics.run_summary import GenerationGrades, RunSummary
from murgat_local.pipeline.cache import VerdictCache
from murgat_local.pipeline.generating import GenerateRunner
from murgat_local.pipeline.judging import StageJudge
from murgat_local.pipeline.runner import Runner

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.memory_heavy("five vLLM engines open together for the whole module"),
]

RESPONDERS = FAMILIES
TEXT = "smollm2-135m-instruct"
MIXED = {
    "id": "mixed",
    "video": "colors",
    "model": "sample-model-c",
    "question": "What changes at 0:01?",
    "options": ["A. the screen turns green", "B. nothing"],
    "answer": "A",
    "model_generation": "Reasoning: The screen turns green while the tone changes (visual, 0:01-0:02; "
    "audio, 0:01-0:02). The screen is green (visual, 0:01). A tone plays (audio, 0:01). "
    "So A.\nAnswer: A",
}


# Own engines: LazyEngine holders (seed 0) the runners take; no other module runs these on vLLM.
@pytest.fixture(scope="module")
def engines():
    """Shared by generation and scoring: each model starts once, when a call first needs it."""
    for m in [*RESPONDERS, TEXT]:
        require_model(m)
    held = {
        m: LazyEngine("vllm", load_preset(m), temperature=0.0, seed=0) for m in [*RESPONDERS, TEXT]
    }
    yield held
    close_all(held.values())


@pytest.fixture(scope="module")
def generated(engines, media_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    # The first question is enough (colours and a tone): the media each responder gets is the point.
    config = GenerateConfig(
        models=RESPONDERS, strategies=["base"], sampling={"max_tokens": 24}, limit=1
    )
    runner = GenerateRunner(
        config,
        media_root,
        out,
        engines={m: engines[m] for m in RESPONDERS},
        grades=GenerationGrades(),
    )
    try:
        result = runner.run(ROOT / "samples" / "questions.jsonl")
    finally:
        runner.close(engines=False)
    return out, result


def rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


@pytest.mark.parametrize("name", FAMILIES)
def test_every_modality_and_verdict_type_on_vllm(engines, name, prompt_ledger):
    """The engine checks every local test model passes (tests/support/engine_checks.py), on the engines
    this module shares; Gemma 4's audio is refused with the CPU build's reason, the engine goes on."""
    eng = engines[name].get()
    _check_every_modality(load_preset(name), eng)
    _check_structured_types(eng)
    assert eng.identity == engines[name].identity  # known before it started
    # Its prompts, for the cross-route check (tests/test_serve_prompt_routes.py).
    assert record_route(prompt_ledger, "vllm", load_preset(name), eng)["text"][0] is not None


@pytest.mark.parametrize("name", FAMILIES)
def test_every_modality_reaches_the_model(engines, name, media_root):
    """`murgat smoke --reach` on the engines this module shares: each modality the engine runs,
    neutralised, moves the decision token; Qwen2.5-Omni's soundtrack beside its clip too."""
    rows = check_reach(load_preset(name), engines[name].get(), media_root)
    assert name != "tiny-qwen2.5-omni" or rows[-1]["modality"] == "audio in video"


@pytest.mark.parametrize(
    "name, stamps",
    [
        ("tiny-gemma4", ("00:06", "00:00 <|image>")),
        ("tiny-qwen3-vl", ("<5.0 seconds>", "<1.0 seconds>")),
    ],
)
def test_frames_reach_the_model_stamped_with_the_time_they_were_sampled_at(engines, name, stamps):
    """Gemma 4 and Qwen3-VL write each frame's time into the prompt from the clip's metadata:
    four frames sampled at 0.5 fps span six seconds, not the 24 fps vLLM would otherwise assume."""
    from vllm import SamplingParams

    eng = engines[name].get()
    req = Request("x", media=(VideoPart(np.zeros((4, 64, 64, 3), np.uint8), 0.5),))
    (out,) = eng.llm.generate([eng._prompt(req)], SamplingParams(max_tokens=1), use_tqdm=False)
    seen = eng.renderer.tokenizer.decode(out.prompt_token_ids)
    assert all(s in seen for s in stamps), seen[:400]


def test_audio_longer_than_the_model_hears_whole_arrives_in_windows(engines):
    """Qwen2-Audio's feature extractor keeps the first 30 s (vLLM truncates): 70 s go as three
    windows, every second of them in the prompt; more windows than the prompt takes is refused."""
    eng = engines["tiny-qwen2-audio"].get()
    rng = np.random.default_rng(0)

    def tokens(seconds):
        media = (
            (AudioPart((0.1 * rng.standard_normal(16000 * seconds)).astype(np.float32)),)
            if seconds
            else ()
        )
        (r,) = eng.judge([Request("Describe it.", media=media, sampling=Sampling(max_tokens=4))])
        assert r.ok, r
        return r.prompt_tokens

    text = tokens(0)
    assert tokens(70) - text == 2 * (tokens(30) - text) + (tokens(10) - text)
    (long,) = eng.judge(
        [JudgeRequest(CLAIM, YesNo, None, (AudioPart(np.zeros(16000 * 130, np.float32)),))]
    )
    assert long.error and "5 audio items" in long.error and "at most 30 s whole" in long.error


def test_each_cited_part_expects_what_vllm_placed_and_a_lost_one_is_named(
    engines, monkeypatch, tmp_path
):
    """Reach per citation on vLLM in process: for a request citing a frame, a clip and two
    stretches of audio, the tokens the model's own processor places for each part (measured
    apart from the engine) are the tokens vLLM placed for it; a path that loses the second
    stretch on its way into the prompt makes the call an error naming that citation."""
    name = "tiny-qwen2.5-omni"
    held = engines[name]
    eng = held.get()
    rng = np.random.default_rng(1)

    def wave(seconds):
        return (0.1 * rng.standard_normal(int(16000 * seconds))).astype(np.float32)

    parts = (
        ImagePart(rng.integers(0, 255, (64, 96, 3), dtype=np.uint8), t=1.0),
        VideoPart(
            rng.integers(0, 255, (4, 64, 64, 3), dtype=np.uint8),
            2.0,
            start=2.0,
            times=(2.0, 2.5, 3.0, 3.5),
        ),
        AudioPart(wave(2.0), start=0.0),
        AudioPart(wave(1.0), start=2.0),
    )
    (res,) = eng.judge([JudgeRequest(CLAIM, YesNo, None, parts)])
    assert res.ok, res
    preset = load_preset(name)
    renderer = ChatRenderer(preset.path, preset)
    measured = PartTokens(preset, renderer, placeholder_tokens(preset.path)).expected(
        Request(CLAIM, media=parts)
    )
    assert [(c.modality, c.expected) for c in res.cited] == measured
    assert [c.expected for c in res.cited][2:] == [50, 25]  # Whisper's frames, halved twice
    assert all(c.arrived == c.expected for c in res.cited), res.cited
    for m in ("image", "video", "audio"):  # what vLLM placed, all of it accounted for
        assert res.reached[m] == sum(c.arrived for c in res.cited if c.modality == m)
    assert [c.citation for c in res.cited] == [
        "visual 0:01",
        "visual 0:02-0:03.5",
        "audio 0:00-0:02",
        "audio 0:02-0:03",
    ]

    # A broken path: the prompt is built without the last part, as a renderer that loses one.
    built = eng._prompt
    monkeypatch.setattr(eng, "_prompt", lambda r: built(dataclasses.replace(r, media=r.media[:3])))
    tpl = load_prompt("entail")
    call = Call(
        tpl,
        tpl.render(fact="A tone plays.", evidence="attached"),
        tuple(("v.mp4", "d", p.modality, i, i + 1) for i, p in enumerate(parts)),
        media=lambda: parts,
    )
    judge = StageJudge("entail", held, VerdictCache(tmp_path / "c.sqlite"))
    (out,) = judge.run([call])
    assert out.verdict is None and out.error == (
        f"audio 0:02-0:03: expected 25 audio tokens, 0 arrived ({name}, in-process vLLM engine)"
    ), out
    assert judge.counters.unreached == 1


def test_each_responder_gets_what_it_can_take_and_its_row_says_so(generated):
    out, result = generated
    media = {}
    for m in RESPONDERS:
        got = rows(out / f"{m}__base" / "responses.jsonl")
        assert [r["status"] for r in got] == ["ok"] * len(got), [r.get("error") for r in got]
        media[m] = next(
            r["media"] for r in got if r["id"] == "q-after-green"
        )  # colours with a tone
    omni, vl, audio, gemma = (
        media[m] for m in ("tiny-qwen2.5-omni", "tiny-qwen3-vl", "tiny-qwen2-audio", "tiny-gemma4")
    )
    assert omni["heard_audio"] and omni["saw_video"] and not omni["visual"]["as_images"]
    # a video model without audio: the clip alone
    assert vl["saw_video"] and not vl["heard_audio"] and not vl["visual"]["as_images"]
    assert "takes no audio" in vl["audio_missing"]
    # an audio-only model: the soundtrack alone
    assert audio["heard_audio"] and not audio["saw_video"] and audio["visual"] is None
    assert "saw nothing" in audio["visual_missing"] and audio["audio"]["seconds"] > 0
    # Gemma 4 takes audio, but not on vLLM's CPU build: planned without it, and recorded
    assert (
        gemma["saw_video"]
        and not gemma["heard_audio"]
        and "takes no audio" in gemma["audio_missing"]
    )


def test_attribution_routed_by_modality_with_each_judge_in_its_cache_keys(
    generated, engines, media_root, tmp_path
):
    responses = tmp_path / "responses.jsonl"
    lines = (
        (ROOT / "samples" / "responses.jsonl").read_text().splitlines()[:2]
    )  # visual and audio citations
    responses.write_text("\n".join([*lines, json.dumps(MIXED)]) + "\n")
    cfg = RunConfig(
        judge="tiny-gemma4",
        verifier=TEXT,
        decomposer=TEXT,
        entailer_visual="tiny-qwen3-vl",
        entailer_audio="tiny-qwen2-audio",
        decontextualize=False,
        max_failed_calls=1.0,
        bootstrap_resamples=0,
    )
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines, summary=RunSummary)
    result = runner.run(responses)  # closes nothing: the engines are the module's
    summary = result.summary
    routes = summary.stages["entail"].routes
    assert summary.entail_routes == {"visual": "tiny-qwen3-vl", "audio": "tiny-qwen2-audio"}
    assert routes["visual"].model == "tiny-qwen3-vl" and routes["visual"].model_calls > 0
    assert routes["audio"].model == "tiny-qwen2-audio" and routes["audio"].model_calls > 0
    assert routes["mixed"].model == "tiny-gemma4"
    assert summary.stages["entail"].model_calls == sum(r.model_calls for r in routes.values())
    # a fact citing both modalities goes to Gemma 4, which cannot take audio here: refused, with why
    recs = {r["id"]: r for r in rows(result.records_path)}
    errors = [
        v["error"]
        for s in recs["mixed"]["trace"]["sentences"]
        for f in s.get("facts", [])
        for v in [f["joint"]]
        if v and v.get("error")
    ]
    assert errors and all(
        "cannot take audio on this engine" in e and "oneDNN" in e for e in errors
    ), errors
    assert routes["mixed"].errors >= len(errors) and routes["mixed"].model_calls == 0
    # every verdict is cached under the judge that gave it
    judges = {
        r[0]
        for r in sqlite3.connect(cfg.cache or tmp_path / "out" / "verdicts.sqlite").execute(
            "SELECT DISTINCT judge FROM verdicts WHERE stage = 'entail'"
        )
    }
    assert judges == {engines["tiny-qwen3-vl"].identity, engines["tiny-qwen2-audio"].identity}
    assert summary.warnings == []
