"""Presets that start where they say: the layout for the GPUs a route sees is chosen before the
identity (and recorded in it) on every route that starts vLLM, and a box whose GPUs cannot hold
the preset is refused before any engine starts, with the `murgat models --fit` line. The GPUs
are injected (`Gpus`); nothing here starts an engine."""

from __future__ import annotations

import dataclasses

import pytest
from support.paths import MODELS, ROOT, require_model
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.engines import LazyEngine, load_preset
from murgat_local.engines.placement import DoesNotFit, Gpus, lay_out, seen

H100, H200 = 79.6, 140.4


def _tiny_with_big_layouts():
    """tiny-gemma4's folder (weights present here) with gemma-4-31b-it's layouts: two H100s at
    tensor parallel 2, or one H200."""
    require_model("tiny-gemma4")
    return dataclasses.replace(load_preset("tiny-gemma4"), fit=load_preset("gemma-4-31b-it").fit)


def test_the_layout_is_the_one_the_preset_holds_for_the_gpus_seen():
    preset = _tiny_with_big_layouts()
    two = lay_out(preset, Gpus(H100, 2))
    assert two.engine_args["tensor_parallel_size"] == 2 and two.layout.startswith("gpus=2")
    assert lay_out(preset, Gpus(H200, 1)).engine_args["tensor_parallel_size"] == 1
    assert lay_out(preset, None) is preset  # no GPUs seen (the CPU build): as written


@pytest.mark.parametrize("kind", ["vllm", "replicas", "ray"])
def test_every_route_that_starts_vllm_is_laid_out_before_its_identity(kind):
    preset = _tiny_with_big_layouts()
    on_two = LazyEngine(kind, preset, gpus=Gpus(H100, 2))
    assert on_two.identity_detail["engine_args"]["tensor_parallel_size"] == 2
    assert on_two.identity_detail["layout"] == on_two.preset.layout
    on_h200 = LazyEngine(kind, preset, gpus=Gpus(H200, 1))
    assert on_h200.identity != on_two.identity
    assert on_h200.identity_detail["engine_args"]["tensor_parallel_size"] == 1


def test_a_box_that_cannot_hold_the_preset_is_refused_with_the_fit_line():
    big = load_preset("gemma-4-31b-it")  # sized from its preset data: no weights needed
    with pytest.raises(DoesNotFit) as e:
        lay_out(big, Gpus(H100, 1))
    assert "gemma-4-31b-it on 1x 79.6 GiB GPU" in str(e.value) and "does not fit" in str(e.value)
    assert lay_out(big, Gpus(H100, 2)).engine_args["tensor_parallel_size"] == 2
    assert lay_out(big, Gpus(H200, 1)).engine_args["tensor_parallel_size"] == 1
    with pytest.raises(DoesNotFit):  # before the engine holder exists, so before any start
        LazyEngine("vllm", _tiny_with_big_layouts(), gpus=Gpus(0.001, 1))


def test_no_gpus_are_seen_for_a_served_model_or_a_remote_ray():
    assert seen("openai") is None and seen("transformers") is None
    assert seen("ray", {"address": "ray://head:10001"}) is None


def _score(tmp_path, media_root, monkeypatch, gpus):
    import murgat_local.engines as engines

    monkeypatch.setenv("MURGAT_QWEN3_OMNI_INSTRUCT", str(MODELS / "tiny-qwen3-omni"))
    monkeypatch.setattr(engines, "seen", lambda kind, options=None: gpus)
    return CliRunner().invoke(
        app,
        [
            "score",
            str(ROOT / "samples/responses.jsonl"),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path / "out"),
            "--judge",
            "qwen3-omni-30b-a3b-instruct",
            "--dry-run",
        ],
    )


def test_score_on_this_cpu_box_takes_a_gpu_preset_and_refuses_small_gpus(
    tmp_path, media_root, monkeypatch
):
    """On the CPU build no GPU is seen: a GPU preset (its folder here a tiny model's) is
    accepted as written. Where the GPUs seen cannot hold it, `murgat score` stops before any
    engine starts, exit 2, with the `--fit` line."""
    require_model("tiny-qwen3-omni")
    accepted = _score(tmp_path, media_root, monkeypatch, None)
    assert accepted.exit_code == 0, accepted.output
    assert "cannot start" not in accepted.output
    refused = _score(tmp_path, media_root, monkeypatch, Gpus(0.001, 1))
    said = " ".join(refused.output.split())
    assert refused.exit_code == 2, refused.output
    assert (
        "qwen3-omni-30b-a3b-instruct cannot start on this box's GPUs: "
        "qwen3-omni-30b-a3b-instruct on 1x 0.0 GiB GPU" in said
    )
    assert "does not fit" in said
