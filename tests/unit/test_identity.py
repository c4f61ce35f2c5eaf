"""Cache keys cover everything that can change a verdict, and nothing that cannot.

Identities are computed for the real local test presets (tiny Qwen3-Omni under vLLM) without
starting an engine; tests/e2e/test_engine_vllm.py checks that a started engine reports the same.
"""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from support.paths import require_model

from murgat_local.digests import DigestMemo
from murgat_local.engines.identity import weights_fingerprint
from murgat_local.judges import LazyEngine, load_preset, load_prompt
from murgat_local.media.segments import SegmentCutter, SegmentOptions
from murgat_local.pipeline.judging import Call, StageJudge
from murgat_local.text.citations import parse_citations


@pytest.fixture(scope="module")
def qwen():
    require_model("tiny-qwen3-omni")
    return load_preset("tiny-qwen3-omni")


def _key(engine, media_keys=()):
    tpl = load_prompt("entail")
    call = Call(
        tpl, tpl.render(evidence="a frame", fact="The screen is red."), media_keys=media_keys
    )
    return StageJudge("entail", engine, cache=None).keys([call])[0]


def _quirks(preset, **change):
    return dataclasses.replace(preset, quirks=preset.quirks.model_copy(update=change))


def _args(preset, **change):
    return dataclasses.replace(preset, engine_args={**preset.engine_args, **change})


def test_every_input_of_a_verdict_changes_the_key_and_nothing_else_does(qwen):
    base = _key(LazyEngine("vllm", qwen))
    assert _key(LazyEngine("vllm", qwen)) == base  # nothing changed: a cache hit
    variants = {
        "temperature": LazyEngine("vllm", qwen, temperature=0.7),
        "seed": LazyEngine("vllm", qwen, seed=1),
        "max_num_seqs": LazyEngine("vllm", qwen, max_num_seqs=8),
        "max_num_batched_tokens": LazyEngine("vllm", qwen, max_num_batched_tokens=4096),
        "tensor_parallel_size": LazyEngine("vllm", _args(qwen, tensor_parallel_size=2)),
        "dtype": LazyEngine("vllm", qwen, dtype="float32"),
        "max_model_len": LazyEngine("vllm", qwen, max_model_len=2048),
        "limit_mm_per_prompt": LazyEngine("vllm", _args(qwen, limit_mm_per_prompt={"image": 2})),
        "enable_prefix_caching": LazyEngine("vllm", qwen, enable_prefix_caching=False),
        "media_first": LazyEngine("vllm", _quirks(qwen, media_first=False)),
        "system_role": LazyEngine("vllm", _quirks(qwen, system_role=False)),
        "video_as_images": LazyEngine("vllm", _quirks(qwen, video_as_images=True)),
        "engine kind": LazyEngine("transformers", qwen),
    }
    keys = {name: _key(e) for name, e in variants.items()}
    for name, k in keys.items():
        assert k != base, f"{name} does not change the cache key"
    assert len(set(keys.values())) == len(keys)
    # Only speed and memory: the same verdicts, the same key.
    assert _key(LazyEngine("vllm", qwen, gpu_memory_utilization=0.9)) == base
    assert _key(LazyEngine("vllm", qwen, kv_cache_memory_bytes=1 << 28)) == base


def test_the_transformers_identity_names_the_dtype_it_runs(qwen, monkeypatch):
    monkeypatch.setattr(
        "murgat_local.engines.identity.cuda_available", lambda: False
    )  # the CPU's default
    hf = LazyEngine("transformers", qwen)
    assert hf.identity_detail["engine_args"]["dtype"] == "float32"
    assert "max_num_seqs" not in hf.identity_detail["engine_args"]  # vLLM's arguments do not apply
    assert LazyEngine("transformers", qwen, dtype="bfloat16").identity != hf.identity


def test_every_cut_option_changes_the_segment_key(media_root):
    (c,) = parse_citations("(visual, 0:01-0:04)")
    (a,) = parse_citations("(audio, 0:02)")
    base = SegmentOptions()
    cutter = SegmentCutter(media_root, base)
    src = cutter.source("colors")
    keys = {(cutter.segment_key(src, c), cutter.segment_key(src, a))}
    for change in ({"fps": 1.0}, {"max_frames": 8}, {"max_side": 224}, {"audio_point_window": 2.0}):
        other = SegmentCutter(media_root, dataclasses.replace(base, **change))
        pair = (
            other.segment_key(other.source("colors"), c),
            other.segment_key(other.source("colors"), a),
        )
        assert pair not in keys, change
        keys.add(pair)
    assert SegmentCutter(media_root, base).segment_key(src, c) == cutter.segment_key(src, c)


def test_weights_fingerprint_reads_every_byte_once(tmp_path, qwen):
    model = tmp_path / "model"
    shutil.copytree(qwen.path, model)
    memo_path = tmp_path / "digests.sqlite"
    memo = DigestMemo(memo_path)
    first = weights_fingerprint(model, memo)
    n_files = memo.reads
    assert n_files >= 5
    # Remembered by path, size and mtime, across processes: nothing is read again.
    again = DigestMemo(memo_path)
    assert weights_fingerprint(model, again) == first and again.reads == 0
    # One byte in the middle of the weights (the old fingerprint read only the ends).
    weights = next(model.glob("*.safetensors"))
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    changed = weights_fingerprint(model, again)
    assert changed != first and again.reads == 1
    # A file in a subfolder, and a file of any suffix, count too.
    (model / "sub").mkdir()
    (model / "sub" / "preprocessor.yaml").write_text("size: 1\n")
    assert weights_fingerprint(model, again) != changed


def test_the_cpu_build_prefills_whole_prompts_in_small_prefix_cache_blocks(qwen):
    from murgat_local.engines.identity import effective_args, vllm_cpu_build

    if not vllm_cpu_build():
        pytest.skip("the CPU build's defaults")
    args = effective_args("vllm", qwen, {})
    assert args["block_size"] == 32 and args["enable_chunked_prefill"] is False
    # a preset or the run's engine_args may still choose; the identity follows what runs
    assert effective_args("vllm", _args(qwen, block_size=128), {})["block_size"] == 128
    assert effective_args("vllm", qwen, {"block_size": 64})["block_size"] == 64
    assert LazyEngine("vllm", qwen).identity != LazyEngine("vllm", qwen, block_size=128).identity
