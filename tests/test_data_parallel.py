"""`--data-parallel N`: N real `vllm serve` replicas (CPU build: one core each), each batch split.

Order is checked with requests that each allow only their own two answers; the split with the
replicas' own statistics; identity and records with a whole `murgat score` run whose cache the
in-process engine then reads without a single model call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, require_model

from murgat_local.engines import LazyEngine, load_preset
from murgat_local.engines.identity import effective_args
from murgat_local.judges import JudgeRequest
from murgat_local.serving.replicas import devices_per_replica, replica_devices, shards


def test_shards_are_contiguous_nearly_equal_and_never_empty():
    for n_items in range(30):
        for n in range(1, 6):
            parts = shards(n_items, n)
            assert [i for r in parts for i in r] == list(range(n_items))
            if n_items:
                assert (
                    all(len(r) for r in parts) and max(map(len, parts)) - min(map(len, parts)) <= 1
                )
                assert len(parts) == min(n, n_items)


def test_each_gpu_replica_sees_one_device(monkeypatch):
    monkeypatch.setattr("murgat_local.serving.replicas.vllm_cpu_build", lambda: False)
    assert replica_devices(2, visible="3,5,7") == [
        {"CUDA_VISIBLE_DEVICES": "3"},
        {"CUDA_VISIBLE_DEVICES": "5"},
    ]
    with pytest.raises(ValueError, match="needs 4 GPUs"):
        replica_devices(4, visible="0,1")


def test_a_tensor_parallel_replica_sees_as_many_devices_as_its_ranks(monkeypatch):
    monkeypatch.setattr("murgat_local.serving.replicas.vllm_cpu_build", lambda: False)
    assert replica_devices(2, 2, visible="4,5,6,7") == [
        {"CUDA_VISIBLE_DEVICES": "4,5"},
        {"CUDA_VISIBLE_DEVICES": "6,7"},
    ]
    assert replica_devices(3, 2, visible="0,1,2,3,4,5,6,7") == [
        {"CUDA_VISIBLE_DEVICES": "0,1"},
        {"CUDA_VISIBLE_DEVICES": "2,3"},
        {"CUDA_VISIBLE_DEVICES": "4,5"},
    ]
    # Without CUDA_VISIBLE_DEVICES: the devices the machine has, counted.
    assert replica_devices(2, 4, visible=None, gpus=8) == [
        {"CUDA_VISIBLE_DEVICES": "0,1,2,3"},
        {"CUDA_VISIBLE_DEVICES": "4,5,6,7"},
    ]
    with pytest.raises(
        ValueError, match=r"--data-parallel 2 at tensor parallel 2 needs 4 GPUs.*names 3"
    ):
        replica_devices(2, 2, visible="0,1,2")
    with pytest.raises(
        ValueError, match=r"--data-parallel 2 at tensor parallel 2 needs 4 GPUs.*2 are visible"
    ):
        replica_devices(2, 2, visible=None, gpus=2)
    with pytest.raises(ValueError, match=r"needs 2 GPUs.*names 0"):
        replica_devices(2, visible="")  # set but empty: CUDA sees no device


def test_the_devices_a_replica_needs_come_from_its_engine_arguments():
    assert devices_per_replica({"dtype": "bfloat16"}) == 1
    assert devices_per_replica({"tensor_parallel_size": 2}) == 2
    assert devices_per_replica({"tensor_parallel_size": 2, "pipeline_parallel_size": 2}) == 4
    preset = load_preset("gemma-3-27b-it")
    assert devices_per_replica(effective_args("replicas", preset, {})) == 1
    assert devices_per_replica(effective_args("replicas", preset, {"tensor_parallel_size": 2})) == 2


def test_cpu_replicas_bind_disjoint_cores_one_list_per_rank(monkeypatch):
    monkeypatch.setattr("murgat_local.serving.replicas.vllm_cpu_build", lambda: True)
    binds = [e["VLLM_CPU_OMP_THREADS_BIND"] for e in replica_devices(2, cores=range(8))]
    assert binds == ["0,1,2,3", "4,5,6,7"]
    # vLLM's CPU build reads one core list per rank, separated by '|'.
    binds = [e["VLLM_CPU_OMP_THREADS_BIND"] for e in replica_devices(2, 2, cores=range(8))]
    assert binds == ["0,1|2,3", "4,5|6,7"]
    assert replica_devices(2, 2, cores=range(3)) == [{}, {}]  # too few to share: vLLM binds


@pytest.mark.engine
@pytest.mark.slow
def test_two_cpu_replicas_split_a_batch_and_keep_its_order(monkeypatch):
    # A key exported in the caller's shell reaches the replicas' servers, which then ask it on
    # every route: the replicas' own clients must send it.
    monkeypatch.setenv("VLLM_API_KEY", "replica-test-key")
    require_model("smollm2-135m-instruct")
    preset = load_preset("smollm2-135m-instruct")
    holder = LazyEngine("replicas", preset, data_parallel=2)
    single = LazyEngine("vllm", preset)
    assert holder.identity == single.identity  # replicas compute what one engine computes
    try:
        engine = holder.get()
        assert len(engine.servers) == 2 and len({s.port for s in engine.servers}) == 2
        binds = [s.env.get("VLLM_CPU_OMP_THREADS_BIND") for s in engine.servers]
        if len(os.sched_getaffinity(0)) >= 2:
            assert binds[0] and binds[1] and not set(binds[0].split(",")) & set(binds[1].split(","))
        requests = [
            JudgeRequest(f"Say a word. Item {i}.", choices=(f"w{i}a", f"w{i}b")) for i in range(24)
        ]
        results = engine.judge(requests)
        assert len(results) == 24
        for i, r in enumerate(results):
            assert r.ok, r
            assert r.text in (f"w{i}a", f"w{i}b"), (i, r.text)
        calls = [c.stats.calls for c in engine.clients]
        assert calls == [12, 12], calls
    finally:
        holder.close()
    assert all(s.proc.poll() is not None for s in engine.servers)  # closing stops every replica


@pytest.mark.engine
@pytest.mark.slow
def test_score_with_data_parallel_shares_the_in_process_cache(media_root, tmp_path):
    for m in ("tiny-qwen3-omni", "smollm2-135m-instruct"):
        require_model(m)
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", COLUMNS="200")
    judges = [
        "--judge",
        "tiny-qwen3-omni",
        "--verifier",
        "smollm2-135m-instruct",
        "--decomposer",
        "smollm2-135m-instruct",
    ]

    def score(out, *extra):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "murgat_local.cli",
                "score",
                str(ROOT / "samples/responses.jsonl"),
                "--media-root",
                str(media_root),
                "--out",
                str(out),
                *judges,
                *map(str, extra),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )

    dp = score(tmp_path / "dp", "--data-parallel", "2")
    assert dp.returncode == 0, dp.stderr[-3000:]
    summary = json.loads((tmp_path / "dp" / "summary.json").read_text())
    assert sum(s["model_calls"] for s in summary["stages"].values()) > 0
    local = score(tmp_path / "local", "--cache", tmp_path / "dp" / "verdicts.sqlite")
    assert local.returncode == 0, local.stderr[-3000:]
    again = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert all(s["model_calls"] == 0 for s in again["stages"].values()), again["stages"]
    assert (tmp_path / "local" / "scores.jsonl").read_text() == (
        tmp_path / "dp" / "scores.jsonl"
    ).read_text()
