"""`--data-parallel N`: N vLLM replicas on one box, each stage batch split between them.

vLLM's offline engine refuses `data_parallel_size > 1`, so each replica is its own `vllm serve`
process (the launcher `murgat serve` uses) with its own `CUDA_VISIBLE_DEVICES` (on the CPU build:
its own cores), driven by the server engine. A batch is cut into N contiguous shards sent at
once; the results come back in the batch's order. Every replica runs the same weights and
arguments as the in-process engine, so the identity, and the cache, are the in-process one's.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from .base import EngineStats, Request, Result
from .identity import effective_args, engine_identity, vllm_cpu_build
from .openai import OpenAIEngine
from .presets import Preset


def replica_devices(n: int, visible: str | None = None) -> list[dict]:
    """The environment each of `n` replicas gets: one GPU each (from CUDA_VISIBLE_DEVICES, else
    0..n-1), or on the CPU build a disjoint set of cores each when there are enough."""
    if vllm_cpu_build():
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
        if len(cores) < n:
            return [{} for _ in range(n)]
        per = len(cores) // n
        return [{"VLLM_CPU_OMP_THREADS_BIND": ",".join(map(str, cores[i * per:(i + 1) * per]))} for i in range(n)]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    gpus = [d for d in visible.split(",") if d.strip()] if visible else [str(i) for i in range(n)]
    if len(gpus) < n:
        raise ValueError(f"--data-parallel {n} needs {n} GPUs; CUDA_VISIBLE_DEVICES names {len(gpus)}")
    return [{"CUDA_VISIBLE_DEVICES": gpus[i]} for i in range(n)]


def shards(n_items: int, n: int) -> list[range]:
    """`n_items` cut into at most `n` contiguous, nearly equal ranges (none empty)."""
    n = max(1, min(n, n_items))
    size, extra = divmod(n_items, n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(range(start, end))
        start = end
    return out


class ReplicaEngine:
    """N `vllm serve` replicas of one preset behind the engine interface."""

    def __init__(self, preset: Preset, *, data_parallel: int, temperature: float = 0.0,
                 max_concurrency: int = 64, **engine_args):
        from ..serving.launcher import API_KEY_VAR
        from ..serving.process import ServerProcess

        if data_parallel < 1:
            raise ValueError("data_parallel must be at least 1")
        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.temperature = temperature
        self._args = effective_args("replicas", preset, engine_args)
        self.servers = [ServerProcess(preset, overrides=self._args, env={**os.environ, **extra})
                        for extra in replica_devices(data_parallel)]
        try:
            for s in self.servers:  # all start at once; each is waited for
                s.start()
            for s in self.servers:
                s.wait_ready()
            # A key in the caller's environment reaches the replicas (they inherit it, and the
            # server's guard then asks it on every route): their clients must send it.
            keyed = API_KEY_VAR if (os.environ.get(API_KEY_VAR) or "").strip() else None
            self.clients = [OpenAIEngine(preset, base_url=s.base_url, temperature=temperature, api_key_env=keyed,
                                         max_concurrency=max_concurrency, **self._args) for s in self.servers]
        except BaseException:
            self.close()
            raise
        self._pool = ThreadPoolExecutor(len(self.clients), thread_name_prefix="replica")

    @property
    def identity(self) -> str:
        return engine_identity("replicas", self.preset, self.temperature, self._args)

    @property
    def stats(self) -> EngineStats:
        total = EngineStats()
        for c in getattr(self, "clients", []):
            for k, v in c.stats.__dict__.items():
                setattr(total, k, getattr(total, k) + v)
        if getattr(self, "clients", None):  # the replicas run side by side: wall time is the longest
            total.wall_s = max(c.stats.wall_s for c in self.clients)
        return total

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        parts = shards(len(requests), len(self.clients))
        futures = [self._pool.submit(c.judge, [requests[i] for i in r]) for c, r in zip(self.clients, parts)]
        out: list[Result] = []
        for f in futures:
            out.extend(f.result())
        return out

    def close(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False)
        for s in self.servers:
            s.stop()
