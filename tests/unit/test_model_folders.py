"""Presets as data, and model folders without one: what `murgat models --json` lists, what a
bare folder is read as (and what it is assumed to be), and the tiny checkpoints' size. No
engine starts here; the engines run the same folders in test_engine_vllm.py."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from support.paths import MODELS, require_model
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.engines import AudioPart, Request, load_preset
from murgat_local.engines.identity import identity_material
from murgat_local.engines.render import adapt_media

TINY = [
    "tiny-qwen3-omni",
    "tiny-gemma3",
    "tiny-gemma4",
    "tiny-qwen3-vl",
    "tiny-qwen2-audio",
    "tiny-qwen2.5-omni",
]


def test_models_json_lists_every_preset_with_what_it_takes_and_how_it_runs():
    out = CliRunner().invoke(app, ["models", "--json"])
    assert out.exit_code == 0, out.output
    listed = {p["name"]: p for p in json.loads(out.stdout)}
    for name in (
        "gemma-4-e4b-it",
        "gemma-4-31b-it",
        "qwen3-vl-32b-instruct",
        "qwen2-audio-7b-instruct",
        *TINY,
    ):
        assert name in listed
    for name in TINY:
        require_model(name)
        assert listed[name]["present"] is True and listed[name]["path"].endswith(name)
    assert listed["gemma-4-31b-it"]["modalities"] == ["image", "text", "video"]
    assert listed["qwen2-audio-7b-instruct"]["quirks"]["max_audio_seconds"] == 30
    assert listed["tiny-gemma4"]["engine_args"]["limit_mm_per_prompt"] == {
        "image": 8,
        "video": 2,
        "audio": 4,
    }
    assert "audio" in listed["tiny-gemma4"]["cpu_refuses"]
    assert {"name", "modalities", "present", "path", "architecture", "engine_args"} <= set(
        listed["tiny-qwen3-vl"]
    )


@pytest.mark.parametrize(
    "name, modalities, window",
    [
        ("tiny-gemma4", {"text", "image", "video", "audio"}, 30.0),
        ("tiny-qwen3-vl", {"text", "image", "video"}, None),
        ("tiny-qwen2-audio", {"text", "audio"}, 30.0),
        ("tiny-qwen3-omni", {"text", "image", "video", "audio"}, None),
        ("tiny-qwen2.5-omni", {"text", "image", "video", "audio"}, None),
    ],
)
def test_a_folder_without_a_preset_is_read_from_its_own_config_and_processor(
    name, modalities, window
):
    folder = require_model(name)
    preset = load_preset(str(folder))
    assert preset.modalities == modalities and preset.architecture == load_preset(name).architecture
    assert preset.quirks.max_audio_seconds == window
    # limits nobody wrote down are defaults, and named as such
    assert preset.engine_args["max_model_len"] == 32768
    assert any(a.startswith("limit_mm_per_prompt") for a in preset.assumed), preset.assumed


def test_a_gemma4_folder_without_an_audio_tower_takes_no_audio(tmp_path):
    """Gemma 4 31B and 26B-A4B share the E4B's architecture name but carry no audio_config."""
    folder = require_model("tiny-gemma4")
    config = json.loads((folder / "config.json").read_text())
    config["audio_config"] = None
    (tmp_path / "config.json").write_text(json.dumps(config))
    shutil.copy(folder / "processor_config.json", tmp_path)
    assert load_preset(str(tmp_path)).modalities == {"text", "image", "video"}


def test_an_unknown_architecture_is_read_from_its_towers_and_the_reading_is_recorded(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["SomeFutureVLForConditionalGeneration"],
                "vision_config": {"hidden_size": 8},
                "video_token_id": 7,
                "text_config": {"max_position_embeddings": 4096},
            }
        )
    )
    preset = load_preset(str(tmp_path))
    assert (
        preset.modalities == {"text", "image", "video"}
        and preset.engine_args["max_model_len"] == 4096
    )
    assert any("SomeFutureVLForConditionalGeneration" in a for a in preset.assumed)
    material = identity_material("transformers", preset, 0.0, {})
    assert material["assumed"] == list(preset.assumed)


def test_a_preset_keeps_the_identity_it_had_before_later_quirks_existed():
    """Cached verdicts are keyed by identity, which holds the quirks: a quirk a preset does not
    set must not appear in it."""
    assert load_preset("tiny-qwen3-omni").quirks.model_dump() == {
        "media_first": True,
        "video_as_images": False,
        "thinking": False,
        "extra_output_tokens": 0,
        "system_role": True,
    }
    assert load_preset("tiny-qwen2-audio").quirks.model_dump()["max_audio_seconds"] == 30


def test_on_vllms_cpu_build_gemma4_takes_no_audio_and_says_why():
    preset = load_preset("tiny-gemma4")
    cpu = preset.on_runtime(cpu=True)
    assert "audio" not in cpu.modalities and "oneDNN" in cpu.unavailable["audio"]
    assert preset.on_runtime(cpu=False) is preset


def test_audio_longer_than_the_window_is_sent_whole_in_consecutive_windows():
    preset = load_preset("tiny-qwen2-audio")
    wave = np.arange(16000 * 70, dtype=np.float32)
    sent = adapt_media(
        Request("x", media=(AudioPart(wave),), captions=("[audio 0:00-1:10]",)), preset
    )
    assert [len(m.waveform) for m in sent.media] == [480000, 480000, 160000]
    assert np.array_equal(np.concatenate([m.waveform for m in sent.media]), wave)
    assert sent.captions == ("[audio 0:00-1:10]", None, None)
    assert (
        adapt_media(Request("x", media=(AudioPart(wave),)), load_preset("tiny-qwen3-omni"))
        .media[0]
        .waveform
        is wave
    )


def test_every_tiny_checkpoint_stays_under_10_mb():
    for name in TINY:
        folder = require_model(name)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        assert size < 10_000_000, (name, size)
    assert MODELS.is_dir()


GIB = 1024**3


def test_a_folder_is_sized_on_vllms_cpu_build_by_the_rule_that_sizes_presets(tmp_path):
    """On the CPU build gpu_memory_utilization is the share of the machine's RAM an engine
    reserves and must find free: a folder no longer asks for vLLM's GPU default (0.92)."""
    from murgat_local.engines.folder import CPU_RUNTIME_GIB, KV_CONTEXTS
    from murgat_local.engines.identity import effective_args
    from murgat_local.engines.presets import memory_share

    folder = tmp_path / "a-copy-of-tiny-qwen3-vl"
    shutil.copytree(require_model("tiny-qwen3-vl"), folder)
    bare = load_preset(str(folder))
    cpu = bare.on_runtime(cpu=True, memory_bytes=24 * GIB)
    weights = (folder / "model.safetensors").stat().st_size
    kv = 2 * 1 * 64 * 2 * 2  # layers x kv heads x head dim x (K, V) x bf16
    need = weights + KV_CONTEXTS * 32768 * kv + CPU_RUNTIME_GIB * GIB
    share = cpu.engine_args["gpu_memory_utilization"]
    assert (
        share == memory_share(need, 24 * GIB)
        and need / (24 * GIB) <= share < need / (24 * GIB) + 0.01
    )
    assert effective_args("vllm", cpu, {})["gpu_memory_utilization"] == share < 0.2
    assert (
        effective_args("vllm", cpu, {"gpu_memory_utilization": 0.5})["gpu_memory_utilization"]
        == 0.5
    )
    # the preset of the same model is sized by the same function (its context is 4096)
    preset = load_preset("tiny-qwen3-vl").on_runtime(cpu=True, memory_bytes=24 * GIB)
    assert preset.engine_args["gpu_memory_utilization"] == memory_share(
        weights + KV_CONTEXTS * 4096 * kv + CPU_RUNTIME_GIB * GIB, 24 * GIB
    )
    # on a GPU the share is of the GPU: vLLM's default, or what a preset names
    assert "gpu_memory_utilization" not in bare.on_runtime(cpu=False).engine_args
    assert load_preset("qwen3-vl-32b-instruct").engine_args["gpu_memory_utilization"] == 0.92
    # printed and recorded with the folder's other assumed defaults
    (said,) = [a for a in bare.assumed if a.startswith("gpu_memory_utilization")]
    assert "vLLM's CPU build" in said and f"{KV_CONTEXTS} contexts of 32768 tokens" in said, said
