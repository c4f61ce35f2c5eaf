"""vLLM in-process engine x every local test model (real engine, no mocks).

A cold vLLM start costs 25-40 s here, so each model's engine comes from the session's pool
(tests/e2e/conftest.py): started once, it serves all its checks and the other modules'.
"""

import pytest
from support.engine_checks import (
    CLAIM,
    MODELS,
    _check_every_modality,
    _check_structured_types,
    check_fitted,
    clip,
    fitting_requests,
)
from support.reach_checks import check_reach
from support.route_checks import record_route

from murgat_local.judges import JudgeRequest, ModelNotFound, YesNo, load_preset, make_engine

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module", params=MODELS)
def vllm_engine(request, engine_pool):
    return load_preset(request.param), engine_pool.get(request.param, "vllm")


def test_vllm_every_modality(vllm_engine):
    _check_every_modality(*vllm_engine)


def test_vllm_every_modality_reaches_the_model(vllm_engine, media_root):
    """`murgat smoke --reach` on this module's engines: each modality, neutralised, moves the
    decision token (a text-only model has nothing to neutralise)."""
    check_reach(*vllm_engine, media_root)


def test_vllm_prompts_are_recorded_for_the_cross_route_check(vllm_engine, prompt_ledger):
    """What this route ran for the smoke probes (compared in test_serve_prompt_routes.py)."""
    preset, eng = vllm_engine
    seen = record_route(prompt_ledger, "vllm", preset, eng)
    assert seen["text"][0] is not None


def test_vllm_several_field_verdicts(vllm_engine):
    _check_structured_types(vllm_engine[1])


def test_vllm_batch_of_many_all_parse(vllm_engine):
    preset, eng = vllm_engine
    reqs = [
        JudgeRequest(f"Claim {i}: the ball is red.", YesNo, "Answer YES or NO.") for i in range(48)
    ]
    results = eng.judge(reqs)
    assert all(r.ok for r in results)


def test_the_label_tokens_give_the_p_yes_the_top_alternatives_give(vllm_engine, monkeypatch):
    """p_yes read from the log-probabilities of the tokens that can decide the label (vLLM's
    `logprob_token_ids`, what the engine asks) is the p_yes read from the top 20 alternatives,
    and from the top k counted from the grammar (what Ray and a server others share are asked:
    every legal one and a masked one; the top 5 asked before miss two where a vocabulary has
    byte tokens for Y and N, as Gemma's does): the same masked logits, gathered instead of
    sorted; with and without a reason before the label. One request per call, after a first
    that fills the prefix cache: a batch's make-up and a cold prefix change the last bits on
    the CPU."""
    from murgat_local.judges.verdicts import ReasonedYesNo

    preset, eng = vllm_engine
    assert eng.label_ids, "the tokenizer has tokens that start YES or NO"
    reqs = [
        JudgeRequest(f"Claim {i}: the ball is {c}.", kind, "Answer YES or NO.")
        for i, c in enumerate(("red", "blue"))
        for kind in (YesNo, ReasonedYesNo)
    ]
    for r in reqs:
        eng.judge([r])
    by_ids = [eng.judge([r])[0] for r in reqs]
    counted = eng.top_logprobs(reqs[0])
    assert 3 < counted < 20
    eng.__dict__["label_ids"] = None  # the top alternatives
    try:
        by_counted = [eng.judge([r])[0] for r in reqs]
        monkeypatch.setattr(eng, "top_logprobs", lambda request: 20)
        by_top = [eng.judge([r])[0] for r in reqs]
    finally:
        del eng.__dict__["label_ids"]
    for a, b, c in zip(by_ids, by_top, by_counted):
        assert a.ok and a.verdict == b.verdict == c.verdict, (a, b, c)
        assert a.p_yes is not None and b.p_yes == pytest.approx(a.p_yes, abs=1e-6), (a, b)
        assert c.p_yes == pytest.approx(a.p_yes, abs=1e-6), (a, c)


def test_a_started_engine_has_the_identity_known_before_it_started(vllm_engine):
    from murgat_local.judges import LazyEngine

    preset, eng = vllm_engine
    assert eng.identity == LazyEngine("vllm", preset).identity


def test_the_engine_runs_the_kv_cache_its_preset_sets(vllm_engine):
    """The test presets fix their KV cache at 256 MiB, and the suite unsets VLLM_CPU_KVCACHE_SPACE,
    which vLLM's CPU build would take over it (tests/conftest.py)."""
    preset, eng = vllm_engine
    cache = eng.llm.llm_engine.vllm_config.cache_config
    assert cache.kv_cache_memory_bytes == preset.engine_args["kv_cache_memory_bytes"] == 256 << 20


def test_missing_model_directory_names_it_and_the_preset(tmp_path):
    preset = load_preset("tiny-qwen3-omni", path_override=tmp_path / "nowhere")
    for kind in ("vllm", "transformers"):
        with pytest.raises(ModelNotFound, match="nowhere.*tiny-qwen3-omni"):
            make_engine(kind, preset)


def test_requests_are_fitted_to_what_the_model_takes(vllm_engine):
    import numpy as np

    from murgat_local.judges import ImagePart

    preset, eng = vllm_engine
    if preset.name == "tiny-gemma3":  # images only, limit_mm_per_prompt image=8
        ranged, points = eng.judge(
            [
                JudgeRequest(CLAIM, YesNo, None, (clip(20),)),  # a 10 s range at 2 fps
                JudgeRequest(
                    CLAIM,
                    YesNo,
                    None,
                    tuple(ImagePart(np.zeros((64, 64, 3), np.uint8)) for _ in range(9)),
                ),
            ]
        )
        assert (
            ranged.ok and ranged.note == "frames reduced from 20 to 8 to fit limit_mm_per_prompt"
        ), ranged
        assert points.error and "limit_mm_per_prompt image=8" in points.error
    elif preset.name == "tiny-qwen3-omni":  # max_model_len 4096, video=2
        results = eng.judge(fitting_requests())
        check_fitted(results)
        # The estimate is the processor's own count, within the margin of what vLLM counted.
        assert (
            abs(
                eng.fitter.estimate(JudgeRequest(CLAIM, YesNo, None, (clip(4),)))
                - results[3].prompt_tokens
            )
            <= 16
        )
    else:
        pytest.skip("media limits are checked on the multimodal test models")


def test_a_batch_the_engine_rejects_is_split_to_isolate_the_request(vllm_engine):
    preset, eng = vllm_engine
    if preset.name != "smollm2-135m-instruct":
        pytest.skip("one text model is enough")
    ok = JudgeRequest("Claim: the ball is red.", YesNo, "Answer YES or NO.")
    too_long = JudgeRequest("Claim: " + "red " * 6000, YesNo)
    fitter, eng.fitter = eng.fitter, None  # let vLLM itself reject the request
    try:
        results = eng.judge([ok, too_long, ok, ok])
    finally:
        eng.fitter = fitter
    assert [r.ok for r in results] == [True, False, True, True]
    assert "engine failed on this request" in results[1].error and eng.stats.batch_splits >= 1
    # With the check in place the same request is refused before the engine, with its reason.
    assert "max_model_len=4096" in eng.judge([too_long])[0].error


def test_a_long_soundtrack_reaches_the_model_whole(vllm_engine):
    """The Whisper feature extractor behind Qwen-Omni audio truncates at 30 s by default: a
    5-minute track must arrive whole (its prompt grows with its length)."""
    import numpy as np

    from murgat_local.engines import AudioPart, Request, Sampling

    preset, eng = vllm_engine
    if preset.name != "tiny-qwen3-omni":
        pytest.skip("audio is checked on the omni test model")
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
    short, lecture = tokens(20) - text, tokens(300) - text
    assert lecture / short == pytest.approx(15, rel=0.03), (short, lecture)


def test_the_sampled_frame_rate_reaches_the_processor(vllm_engine):
    import numpy as np

    from murgat_local.engines import Request, VideoPart
    from murgat_local.engines.base import build_messages
    from murgat_local.engines.render import processor_inputs

    preset, eng = vllm_engine
    if preset.name not in ("tiny-qwen3-omni", "tiny-qwen2.5-omni"):
        pytest.skip("frame timing is checked on the Qwen omni test models")
    frames = np.zeros((8, 64, 64, 3), np.uint8)
    for fps in (2.0, 0.5):
        req = Request("x", media=(VideoPart(frames, fps),))
        prompt = eng._prompt(req)
        assert prompt["mm_processor_kwargs"]["fps"] == fps  # what vLLM hands its processor
        messages, media = build_messages(req, preset.quirks)
        # ... and what the model's processor makes of it: seconds per temporal patch of 2 frames
        assert processor_inputs(eng.renderer, messages, media)[
            "video_second_per_grid"
        ].tolist() == [2 / fps]
