"""Exactly one BOS at the start of every prompt, the same token ids on every route.

The chat template writes the model's BOS; the prompt is that text tokenized once, without the
tokenizer adding special tokens, whatever vLLM's own default for the family is (Gemma 3's
processor adds them, Gemma 4's does not). The in-process vLLM engine's prompt ids, as vLLM
reports them, are checked against the transformers route's (`processor_inputs`) for the same
request. One engine per model, started once for the module.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.paths import require_model

from murgat_local.engines.base import build_messages
from murgat_local.engines.render import ChatRenderer, processor_inputs
from murgat_local.judges import ImagePart, JudgeRequest, YesNo, load_preset

# Gemma 3 first: test_engine_vllm, which runs just before, ends on it (the pool keeps it).
BOS_MODELS = ["tiny-gemma3", "tiny-gemma4"]
TEXT = JudgeRequest("Claim: the ball is red.", YesNo, "Answer YES or NO.")
IMAGE = JudgeRequest(
    "Claim: the picture is black.",
    YesNo,
    "Answer YES or NO.",
    (ImagePart(np.zeros((64, 64, 3), np.uint8)),),
)


def _renderer(name: str) -> tuple:
    require_model(name)
    preset = load_preset(name)
    return preset, ChatRenderer(preset.require_path(), preset)


def _transformers_ids(renderer: ChatRenderer, preset, request) -> list[int]:
    messages, media = build_messages(request, preset.quirks)
    return processor_inputs(renderer, messages, media)["input_ids"][0].tolist()


@pytest.mark.parametrize(
    "name", BOS_MODELS + ["gemma3-270m", "smollm2-135m-instruct", "tiny-qwen3-vl"]
)
def test_the_prompt_is_the_templates_text_tokenized_once(name):
    preset, renderer = _renderer(name)
    messages, _ = build_messages(TEXT, preset.quirks)
    ids = renderer.prompt_ids(messages)
    tok = renderer.tokenizer
    template = (renderer.processor or tok).apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert ids == tok(template, add_special_tokens=False)["input_ids"]
    assert ids == _transformers_ids(renderer, preset, TEXT)
    if tok.bos_token_id is not None and template.startswith(tok.bos_token):
        assert ids[0] == tok.bos_token_id and ids[1] != tok.bos_token_id, ids[:4]


@pytest.fixture(scope="module", params=BOS_MODELS)
def engine(request, engine_pool):
    return load_preset(request.param), engine_pool.get(request.param, "vllm")


def _vllm_ids(eng, request) -> list[int]:
    """The prompt ids vLLM ran, for the prompt and sampling the engine builds for `request`."""
    (out,) = eng.llm.generate([eng._prompt(request)], [eng._sampling(request)], use_tqdm=False)
    return list(out.prompt_token_ids)


@pytest.mark.engine
def test_the_in_process_engine_sends_one_bos_and_the_transformers_routes_ids(engine):
    preset, eng = engine
    bos = eng.renderer.tokenizer.bos_token_id
    for request in (TEXT, IMAGE):
        ids = _vllm_ids(eng, request)
        assert ids[0] == bos and ids[1] != bos, (preset.name, ids[:6])
        assert ids == _transformers_ids(eng.renderer, preset, request), preset.name
    (res,) = eng.judge([TEXT])
    assert res.ok and res.prompt_tokens == len(_vllm_ids(eng, TEXT))


def test_the_prompt_rule_is_part_of_the_identity(monkeypatch):
    from murgat_local.engines import identity

    preset = load_preset("tiny-gemma4")
    require_model(preset.name)
    now = identity.engine_identity("vllm", preset, 0.0, {})
    assert (
        identity.identity_material("vllm", preset, 0.0, {})["prompt_tokens"]
        == identity.PROMPT_TOKENS
    )
    monkeypatch.setattr(identity, "PROMPT_TOKENS", "another rule")
    assert identity.engine_identity("vllm", preset, 0.0, {}) != now


def test_a_route_that_ran_another_prompt_is_named():
    """The cross-route comparison (tests/route_checks.py) names the modality and the routes whose
    prompt ids differ; a probe a route did not run is not compared."""
    from support.route_checks import differences

    same = {"text": ("a" * 64, 1, 40), "audio": (None, None, 0)}
    assert (
        differences({"vllm": same, "ray": same, "transformers": dict(same, audio=("c", 1, 9))})
        == []
    )
    other = dict(same, text=("b" * 64, 2, 41))
    (line,) = differences({"vllm": same, "openai": other})
    assert line.startswith("text: ") and "openai: 41 tokens, 2 BOS" in line
