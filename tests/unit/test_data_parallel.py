"""`--data-parallel N`: N real `vllm serve` replicas (CPU build: one core each), each batch split.

Order is checked with requests that each allow only their own two answers; the split with the
replicas' own statistics; identity and records with a whole `murgat score` run whose cache the
in-process engine then reads without a single model call.
"""

from __future__ import annotations

import pytest

from murgat_local.engines import load_preset
from murgat_local.engines.identity import effective_args
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
