"""A thinking judge never loses a verdict to its budget: a thought cut at the budget is closed
and the verdict decoded under the grammar, and the record and the stage's counters say so.

Runs the tiny Qwen3-Omni thinker (random weights: it never closes a thought by itself) with a
chat template that opens a thought, the qwen3 reasoning parser, and a budget of 8 tokens."""

from __future__ import annotations

import dataclasses

import pytest
from support.paths import require_model

from murgat_local.engines import LazyEngine, load_preset
from murgat_local.judges import load_prompt
from murgat_local.judges.calls import Call
from murgat_local.pipeline.cache import VerdictCache
from murgat_local.pipeline.judging import StageJudge

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def thinking_copy(tmp_path):
    """The tiny model's folder with a chat template whose answer turn opens a thought."""
    src = require_model("tiny-qwen3-omni")
    folder = tmp_path / "tiny-qwen3-omni-thinking"
    folder.mkdir()
    for f in src.iterdir():
        if f.name != "chat_template.jinja":
            (folder / f.name).symlink_to(f)
    template = (src / "chat_template.jinja").read_text()
    opened = "{{- '<|im_start|>assistant\\n' -}}"
    assert opened in template
    (folder / "chat_template.jinja").write_text(
        template.replace(opened, "{{- '<|im_start|>assistant\\n<think>\\n' -}}")
    )
    preset = load_preset("tiny-qwen3-omni")
    return dataclasses.replace(
        preset,
        name="tiny-qwen3-omni-thinking",
        path=folder,
        engine_args={**preset.engine_args, "reasoning_parser": "qwen3"},
        quirks=preset.quirks.model_copy(update={"thinking": True, "extra_output_tokens": 8}),
    )


def test_a_thought_cut_at_its_budget_still_gives_a_verdict_and_is_counted(tmp_path):
    holder = LazyEngine("vllm", thinking_copy(tmp_path))
    try:
        stage = StageJudge("verifiable", holder, VerdictCache(tmp_path / "cache.sqlite"))
        tpl = load_prompt("verifiable")
        calls = [Call(tpl, tpl.render(sentence=s)) for s in ("The sky is red.", "A dog barks.")]
        outcomes = stage.run(calls)
        for o in outcomes:
            assert o.ok and o.verdict.label in ("YES", "NO"), o
            assert o.thought_cut and o.trace()["thought_cut"] is True
            assert "<think>" not in o.raw or "</think>" in o.raw  # the thought was closed
            assert o.p_yes is not None and 0.0 <= o.p_yes <= 1.0
        assert stage.counters.as_dict()["thought_cut"] == 2
        # Cached as judged: the same verdicts, p_yes and cut flag come back.
        again = StageJudge("verifiable", holder, stage.cache).run(calls)
        assert [(o.verdict, o.p_yes, o.thought_cut, o.cached) for o in again] == [
            (o.verdict, o.p_yes, True, True) for o in outcomes
        ]
    finally:
        holder.close()


def test_on_vllm_serve_a_cut_thought_is_closed_and_its_verdict_decoded(tmp_path):
    """The same on `vllm serve` through the OpenAI engine: the verdict comes from a second,
    constrained completions request on the prompt ids + the thought's + the closing tag."""
    import os

    from murgat_local.engines.openai import OpenAIEngine
    from murgat_local.serving import ServerProcess

    preset = thinking_copy(tmp_path)
    env = dict(os.environ)
    with ServerProcess(preset, log=tmp_path / "vllm-serve.log", env=env) as server:
        holder = LazyEngine("openai", preset, base_url=server.base_url)
        stage = StageJudge("verifiable", holder, VerdictCache(tmp_path / "cache.sqlite"))
        tpl = load_prompt("verifiable")
        calls = [Call(tpl, tpl.render(sentence=s)) for s in ("The sky is red.", "A dog barks.")]
        outcomes = stage.run(calls)
        for o in outcomes:
            assert o.ok and o.verdict.label in ("YES", "NO"), o
            assert o.thought_cut and o.trace()["thought_cut"] is True
            assert "</think>" in o.raw  # the thought, closed, before the verdict
            assert o.p_yes is not None and 0.0 <= o.p_yes <= 1.0
        assert stage.counters.as_dict()["thought_cut"] == 2
        assert isinstance(holder.get(), OpenAIEngine)
        holder.close()


def test_on_transformers_a_cut_thought_is_closed_and_its_verdict_decoded(tmp_path):
    """transformers decodes the thought free up to its budget, closes it, and continues the
    same sequence under the grammar."""
    holder = LazyEngine("transformers", thinking_copy(tmp_path))
    try:
        stage = StageJudge("verifiable", holder, VerdictCache(tmp_path / "cache.sqlite"))
        tpl = load_prompt("verifiable")
        calls = [Call(tpl, tpl.render(sentence=s)) for s in ("The sky is red.", "A dog barks.")]
        for o in stage.run(calls):
            assert o.ok and o.verdict.label in ("YES", "NO"), o
            assert o.thought_cut and "</think>" in o.raw, o
            assert o.p_yes is not None and 0.0 <= o.p_yes <= 1.0
        assert stage.counters.as_dict()["thought_cut"] == 2
    finally:
        holder.close()


def test_on_ray_a_cut_thought_is_closed_and_its_verdict_decoded(tmp_path):
    """Ray Data LLM: the cut rows go through a second pass on the prompt ids + the thought's +
    the closing tag, under the grammar."""
    pytest.importorskip("ray")
    holder = LazyEngine("ray", thinking_copy(tmp_path), local_cpus=4)
    try:
        stage = StageJudge("verifiable", holder, VerdictCache(tmp_path / "cache.sqlite"))
        tpl = load_prompt("verifiable")
        calls = [Call(tpl, tpl.render(sentence=s)) for s in ("The sky is red.", "A dog barks.")]
        for o in stage.run(calls):
            assert o.ok and o.verdict.label in ("YES", "NO"), o
            assert o.thought_cut and "</think>" in o.raw, o
            assert o.p_yes is not None and 0.0 <= o.p_yes <= 1.0
        assert stage.counters.as_dict()["thought_cut"] == 2
    finally:
        holder.close()
