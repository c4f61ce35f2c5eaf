"""One engine set-up path for every command: the run's `engine_args` (vLLM's own arguments) go
to the engines that run vLLM, never to another engine, which would refuse them when it starts
(`murgat program run` passed them to every engine; tests/e2e/test_program_e2e.py runs it)."""

from __future__ import annotations

import pytest
from support.paths import require_model

from murgat_local.engines import engine_holder, load_preset

VLLM_ONLY = {"max_num_seqs": 4, "enforce_eager": True}


@pytest.fixture(scope="module")
def qwen():
    require_model("tiny-qwen3-omni")
    return load_preset("tiny-qwen3-omni")


def test_vllm_arguments_go_to_vllm_only(qwen):
    on_vllm = engine_holder("vllm", qwen, VLLM_ONLY, {}, seed=0)
    assert {k: on_vllm.options[k] for k in VLLM_ONLY} == VLLM_ONLY
    plain = engine_holder("transformers", qwen, {}, {}, seed=0)
    given = engine_holder("transformers", qwen, VLLM_ONLY, {}, seed=0)
    assert not set(VLLM_ONLY) & set(given.options)
    assert given.identity == plain.identity  # and the cache keys do not change with them
