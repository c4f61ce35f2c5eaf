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

GPU_PRESETS = [n for n in available_presets() if not load_preset(n).local_test]


def _fit(name, gpu="h100", count=1):
    return fit_preset(load_preset(name), gpu, GPUS[gpu], count)


def test_vllm_sizes_gemma4_31b_and_qwen3_vl_32b_at_32k():
    gemma = _fit("gemma-4-31b-it")
    # At 16,384 batched tokens in flight twice, the sliding layers hold the whole 32K context.
    assert gemma.kv_need_gib == 27.51 and gemma.weights_gib == 58.0 and gemma.room_gib == 15.23
    assert not gemma.fits and gemma.suggest == {"gpus": 2, "tensor_parallel_size": 2}
    qwen = _fit("qwen3-vl-32b-instruct")
    assert qwen.kv_need_gib == 8.0 and qwen.room_gib == 10.83 and qwen.fits


def test_gemma4_31b_on_two_h100s_takes_its_layout():
    two = _fit("gemma-4-31b-it", count=2)
    assert two.fits and two.layout == Layout(gpus=2, tensor_parallel_size=2)
    assert two.kv_need_gib == 13.76 and two.weights_gib == 29.0


def test_cli_h100_names_gemma4_31b_and_its_fix():
    out = CliRunner().invoke(app, ["models", "--fit", "--gpu", "h100"])
    assert out.exit_code == 0
    line = next(l for l in out.stdout.splitlines() if l.startswith("gemma-4-31b-it "))
    assert "does not fit" in line and "tensor_parallel_size=2" in line


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
        assert row["fits"] and row["kv_need_gib"] <= row["room_gib"] and row["suggest"] is None, row


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

    qwen = load_preset("qwen3-vl-32b-instruct")  # needs 8 GiB of KV at 32K on one H100

    def fixed(n_bytes):
        args = {**qwen.engine_args, "kv_cache_memory_bytes": n_bytes}
        return fit_preset(dataclasses.replace(qwen, engine_args=args), "h100", GPUS["h100"])

    assert fixed(4 * 1024**3).room_gib == 4.0 and not fixed(4 * 1024**3).fits
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
