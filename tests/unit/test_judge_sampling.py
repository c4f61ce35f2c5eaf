"""A thinking preset's judge decoding follows its model card and is in the engine identity:
the preset holds the card's settings, every route sends them for a judge call, and a change
to them is a new identity (so new cache keys)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from murgat_local.engines import Request, load_preset
from murgat_local.engines.identity import engine_identity, identity_material
from murgat_local.engines.presets import JudgeSampling
from murgat_local.engines.ray import _sampling as ray_sampling
from murgat_local.engines.vllm import VLLMEngine
from murgat_local.engines.wire import body
from murgat_local.judges import YesNo

THINKING = "qwen3-omni-30b-a3b-thinking"
# Qwen3-Omni's README (vLLM usage): temperature 0.6, top_p 0.95, top_k 20.
CARD = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "seed": 0}


def test_the_thinking_preset_holds_its_model_cards_sampling():
    assert load_preset(THINKING).quirks.sampling.model_dump() == CARD
    assert load_preset("smollm2-135m-instruct").quirks.sampling is None


def test_the_sampling_is_in_the_identity_and_a_change_is_a_new_judge():
    preset = load_preset(THINKING)
    material = identity_material("vllm", preset, 0.0, {}, fingerprint="w")
    assert material["quirks"]["sampling"] == CARD
    hotter = dataclasses.replace(
        preset,
        quirks=preset.quirks.model_copy(
            update={"sampling": JudgeSampling(temperature=0.7, top_p=0.95, top_k=20)}
        ),
    )
    assert engine_identity("vllm", preset, 0.0, {}, fingerprint="w") != engine_identity(
        "vllm", hotter, 0.0, {}, fingerprint="w"
    )
    # A preset without it keeps the identity it had (no `sampling` key at all).
    plain = identity_material("vllm", load_preset("smollm2-135m-instruct"), 0.0, {})
    assert "sampling" not in plain["quirks"]


def test_every_route_sends_the_cards_sampling_for_a_judge_call():
    preset = load_preset(THINKING)
    judge = Request("Is the sky blue?", YesNo)
    wire = body(judge, preset.quirks, "m", 0.0)
    assert (wire["temperature"], wire["top_p"], wire["top_k"], wire["seed"]) == (0.6, 0.95, 20, 0)
    ray = ray_sampling(judge, 0.0, 0, preset.quirks)
    assert (ray["temperature"], ray["top_p"], ray["top_k"], ray["seed"]) == (0.6, 0.95, 20, 0)
    engine = SimpleNamespace(preset=preset, temperature=0.0, label_ids=(45, 56), top_logprobs=None)
    sp = VLLMEngine._sampling(engine, judge)
    assert (sp.temperature, sp.top_p, sp.top_k, sp.seed) == (0.6, 0.95, 20, 0)
    # p_yes from the tokens that can decide the label, not the top alternatives of every token.
    assert (sp.logprob_token_ids, sp.logprobs) == ([45, 56], None)
    # A greedy preset's judge stays greedy; a tokenizer without label tokens: the top k, as
    # many as the engine counts from the grammar (`LabelTokens.top_logprobs`).
    smol = load_preset("smollm2-135m-instruct")
    counted = SimpleNamespace(
        preset=smol, temperature=0.0, label_ids=None, top_logprobs=lambda r: 7
    )
    sp = VLLMEngine._sampling(counted, judge)
    assert sp.temperature == 0.0 and sp.seed is None
    assert (sp.logprob_token_ids, sp.logprobs) == (None, 7)


def test_ray_rows_keep_integer_sampling_when_batched_as_columns():
    """Ray Data batches rows as columns: a yes/no row beside a free-text row (and a stand-in row
    for one that could not be prepared) must keep `logprobs` an int, or vLLM's engine core gets
    5.0, cannot decode the request and the run hangs (found by the suite on the Ray route)."""
    import pyarrow as pa

    from murgat_local.engines.ray_rows import _stand_in
    from murgat_local.judges import AtomicFacts

    preset = load_preset("smollm2-135m-instruct")
    rows = [
        ray_sampling(Request("Is the sky blue?", YesNo), 0.0, 0, preset.quirks),
        ray_sampling(Request("Split it.", AtomicFacts), 0.0, 0, preset.quirks),
    ]
    rows.append(_stand_in(rows[0]))
    assert {frozenset(r) - {"structured_outputs"} for r in rows} == {
        frozenset(rows[0]) - {"structured_outputs"}
    }
    batch = pa.Table.from_pylist([{"sampling_params": r} for r in rows]).to_pandas()
    for sp in batch["sampling_params"]:
        assert isinstance(sp["logprobs"], int) and isinstance(sp["max_tokens"], int), sp
