"""`murgat models --fit`: vLLM's own KV sizing on config-only presets and real tiny folders, the
layout a preset needs for the GPUs seen, and the refusal before an engine starts."""

import json

import pytest
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.engines import available_presets, load_preset
from murgat_local.engines.fit import (
    GPUS,
    Layout,
    choose_layout,
    fit_preset,
    refusal,
    safetensors_bytes,
)
from murgat_local.engines.presets import all_presets

GPU_PRESETS = [n for n in available_presets() if not load_preset(n).local_test]


def _fit(name, gpu="h100", count=1):
    return fit_preset(load_preset(name), gpu, GPUS[gpu], count, variants=all_presets)


def _plan(name, **over):
    from murgat_local.engines.fit import _config_json, _context
    from murgat_local.engines.fit_needs import kv_plan

    preset = load_preset(name)
    config = _config_json(preset)
    sizing = {
        "dtype": preset.engine_args.get("dtype") or "auto",
        "max_model_len": _context(preset, config),
        "tensor_parallel_size": 1,
        "max_num_batched_tokens": 16384,
        **over,
    }
    return kv_plan(config, **sizing)


@pytest.mark.parametrize(
    "name", ["gemma-3-27b-it", "gemma-4-e4b-it", "gemma-4-31b-it", "qwen3-vl-32b-instruct"]
)
def test_kv_need_is_the_least_memory_vllms_start_up_check_accepts(name):
    """The need is judged by vLLM's own `get_kv_cache_configs` (what its engine core calls at
    start): it accepts exactly that many bytes and refuses one byte less."""
    from vllm.v1.core.kv_cache_utils import get_kv_cache_configs

    plan = _plan(name)
    need = plan.need_bytes()
    get_kv_cache_configs(plan.vllm_config, [dict(plan.specs)], [need])
    with pytest.raises(ValueError, match="KV\\s*cache is needed|No available memory"):
        get_kv_cache_configs(plan.vllm_config, [dict(plan.specs)], [need - 1])


def test_grouping_pads_gemma3_beyond_the_layers_sum():
    """vLLM groups Gemma 3's 62 layers (52 sliding, 10 full) in groups of equal size, padding
    the full-attention group: more than the per-layer sum."""
    from vllm.v1.core.kv_cache_utils import max_memory_usage_bytes

    plan = _plan("gemma-3-27b-it")
    by_layer = max_memory_usage_bytes(plan.vllm_config, plan.specs.values())
    assert plan.need_bytes() > by_layer


def test_gemma4_31b_does_not_fit_one_h100_at_32k_and_takes_two():
    gemma = _fit("gemma-4-31b-it")
    assert not gemma.fits and gemma.variant == "gemma-4-31b-it-h100"
    # On the one GPU given, a layout that fits it, with what it costs.
    assert gemma.suggest == {"tensor_parallel_size": 1, "max_num_batched_tokens": 4096}
    assert gemma.cost and "4096 tokens a step" in gemma.cost[0]
    assert _fit("gemma-4-31b-it-h100").fits
    two = _fit("gemma-4-31b-it", count=2)
    assert two.fits and two.layout == Layout(gpus=2, tensor_parallel_size=2)
    assert two.weights_gib == round(gemma.weights_gib / 2, 2)


def test_the_profile_estimate_is_named_and_counted():
    qwen = _fit("qwen3-vl-32b-instruct")
    assert {"activations_gib", "cuda_context_gib"} <= set(qwen.profile)
    assert qwen.kv_room_gib == pytest.approx(qwen.room_gib - qwen.profile_gib, abs=0.02)
    assert qwen.headroom_gib == round(qwen.kv_room_gib - qwen.kv_need_gib, 2)


def test_cli_h100_names_gemma4_31b_and_its_fix():
    out = CliRunner().invoke(app, ["models", "--fit", "--gpu", "h100"])
    assert out.exit_code == 0
    line = next(l for l in out.stdout.splitlines() if l.startswith("gemma-4-31b-it "))
    assert "does not fit" in line and "max_num_batched_tokens=4096" in line
    assert "gemma-4-31b-it-h100" in line
    two = CliRunner().invoke(app, ["models", "--fit", "--gpu", "h100", "--gpus", "2", "--json"])
    row = next(r for r in json.loads(two.stdout) if r["name"] == "gemma-4-31b-it")
    assert row["fits"] and row["layout"]["tensor_parallel_size"] == 2


def test_a_runs_own_engine_args_are_what_is_sized():
    """A run's `[engine_args]` are the engine's: sized over the preset's and its layout."""
    preset = load_preset("gemma-4-31b-it")
    own = fit_preset(preset, "h100", GPUS["h100"], 1, {"max_num_batched_tokens": 4096})
    assert own.fits and own.layout.max_num_batched_tokens == 4096
    short = fit_preset(preset, "h100", GPUS["h100"], 1, {"max_model_len": 4096})
    assert short.layout.max_model_len == 4096 and short.kv_need_gib < _fit(preset.name).kv_need_gib
    # A run that asks for more than the GPUs hold is refused with its own figures.
    big = fit_preset(preset, "h100", GPUS["h100"], 2, {"tensor_parallel_size": 1})
    assert big.layout.tensor_parallel_size == 1 and not big.fits


def test_a_kv_cache_holds_the_tokens_vllm_counts_from_its_blocks():
    """`--kv-cache-bytes`: vLLM's capacity for a full-attention model is whole blocks of the
    cache over the per-block bytes of every layer (computed here from the config by hand)."""
    from murgat_local.engines.fit_capacity import capacity

    out = CliRunner().invoke(
        app,
        ["models", "--fit", "qwen3-vl-32b-instruct", "--kv-cache-bytes", str(4 * 1024**3)]
        + ["--max-model-len", "8192", "--json"],
    )
    assert out.exit_code == 0, out.output
    row = json.loads(out.stdout)[0]
    per_token = 64 * 2 * 8 * 128 * 2  # layers x (K, V) x KV heads x head size x bf16
    blocks = 4 * 1024**3 // (per_token * 16)
    assert row["kv_bytes_per_token"] == per_token and row["block_size"] == 16
    assert row["kv_tokens"] == blocks * 16
    cpu = capacity(load_preset("qwen3-vl-32b-instruct"), 2 * 1024**3, "cpu")
    assert cpu.block_size == 32


def test_cpu_sizing_needs_a_cache_size():
    assert CliRunner().invoke(app, ["models", "--fit", "--gpu", "cpu"]).exit_code != 0


def test_cli_json_on_one_h200_every_gpu_preset_fits():
    out = CliRunner().invoke(app, ["models", "--fit", "--gpu", "h200", "--json"])
    assert out.exit_code == 0
    rows = json.loads(out.stdout)
    assert {
        "name",
        "gpu",
        "gpus",
        "weights_gib",
        "kv_need_gib",
        "room_gib",
        "fits",
        "suggest",
    } <= set(rows[0])
    by_name = {r["name"]: r for r in rows}
    assert set(GPU_PRESETS) <= set(by_name)
    for name in GPU_PRESETS:
        row = by_name[name]
        assert row["fits"] and row["headroom_gib"] >= 0 and row["suggest"] is None, row
        assert row["profile_estimate_gib"]["cuda_context_gib"] > 0


def test_cli_refuses_an_unknown_gpu():
    assert CliRunner().invoke(app, ["models", "--fit", "--gpu", "tpu"]).exit_code == 2


@pytest.mark.parametrize("name", ["tiny-qwen3-omni", "tiny-gemma4", "smollm2-135m-instruct"])
def test_tiny_folders_are_sized_from_their_safetensors(name):
    preset = load_preset(name)
    if not (preset.path / "config.json").is_file():
        pytest.skip(f"{name} is not built")
    fit = fit_preset(preset, "rtx4090", GPUS["rtx4090"])
    assert fit.weights_from == "safetensors" and fit.fits
    assert fit.weights_gib == round(
        safetensors_bytes(preset.path, preset.engine_args.get("dtype")) / 1024**3, 2
    )


def test_omni_weights_are_the_thinkers(tmp_path):
    import struct

    header = {
        "thinker.w": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]},
        "talker.w": {"dtype": "BF16", "shape": [8], "data_offsets": [64, 80]},
    }
    raw = json.dumps(header).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(80))
    assert safetensors_bytes(tmp_path, None) == 64
    assert safetensors_bytes(tmp_path, "bfloat16") == 32


def test_layout_choice_takes_the_largest_kind_no_larger_than_the_gpus():
    layouts = {"h100": Layout(gpus=2, tensor_parallel_size=2), "h200": Layout()}
    assert choose_layout(layouts, 79.6) == layouts["h100"]
    assert choose_layout(layouts, 100.0) == layouts["h100"]
    assert choose_layout(layouts, 140.4) == layouts["h200"]
    assert choose_layout(layouts, 180.0) == layouts["h200"]
    assert choose_layout(layouts, 44.4) is None


def test_on_gpus_applies_the_layout_the_box_can_hold():
    preset = load_preset("gemma-4-31b-it")
    assert preset.on_gpus(79.6, 2).engine_args["tensor_parallel_size"] == 2
    assert preset.on_gpus(79.6, 1).engine_args == preset.engine_args
    assert preset.on_gpus(140.4, 1).engine_args["tensor_parallel_size"] == 1


def test_a_fixed_kv_cache_is_the_room_in_place_of_the_share():
    import dataclasses

    qwen = load_preset("qwen3-vl-32b-instruct")

    def fixed(n_bytes):
        args = {**qwen.engine_args, "kv_cache_memory_bytes": n_bytes}
        return fit_preset(dataclasses.replace(qwen, engine_args=args), "h100", GPUS["h100"])

    need = fixed(16 * 1024**3).kv_need_gib
    assert fixed(4 * 1024**3).room_gib == 4.0 and need > 4.0 and not fixed(4 * 1024**3).fits
    assert fixed(16 * 1024**3).room_gib == 16.0 and fixed(16 * 1024**3).fits
    # More than the GPU holds beside the weights: the room is what is left of it.
    whole = fixed(200 * 1024**3)
    assert whole.room_gib == round(GPUS["h100"].memory_gib - whole.weights_gib, 2)


def test_start_is_refused_only_on_cuda_where_it_does_not_fit():
    small = _fit("gemma-4-31b-it")
    assert refusal(True, small) == small.line() and "does not fit" in small.line()
    assert refusal(False, small) is None
    assert refusal(True, _fit("gemma-4-31b-it", "h200")) is None
    assert refusal(True, None) is None
