"""`--data-parallel N`: N vLLM replicas on one box, each stage batch split between them.

vLLM's offline engine refuses `data_parallel_size > 1`, so each replica is its own `vllm serve`
process (the launcher `murgat serve` uses) with its own `CUDA_VISIBLE_DEVICES`: as many GPUs as
its tensor (and pipeline) parallel ranks (on the CPU build: its own cores, a list per rank),
driven by the server engine. A batch is cut into N contiguous shards sent at
once; the results come back in the batch's order. Every replica runs the same weights and
arguments as the in-process engine, so the identity, and the cache, are the in-process one's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..engines.base import EngineStats, Request, Result
from ..engines.confidence import LOGPROBS_MODE
from ..engines.identity import effective_args, engine_identity, vllm_cpu_build
from ..engines.openai import OpenAIEngine
from ..engines.placement import lay_out, seen
from ..engines.presets import Preset


def devices_per_replica(args: dict) -> int:
    """The devices one replica runs on: one per rank of its tensor and pipeline parallel layout
    (`args`: the engine arguments in effect, the preset's with the run's overrides)."""
    return int(args.get("tensor_parallel_size") or 1) * int(args.get("pipeline_parallel_size") or 1)


def _gpu_count() -> int:
    import torch

    return torch.cuda.device_count()


def _layout(n: int, per: int) -> str:
    return f"--data-parallel {n}" + (f" at tensor parallel {per}" if per > 1 else "")


def replica_devices(
    n: int,
    per: int = 1,
    *,
    visible: str | None = None,
    gpus: int | None = None,
    cores: Sequence[int] | None = None,
) -> list[dict]:
    """The environment each of `n` replicas of `per` devices gets.

    GPUs: `per` consecutive devices each, taken from `visible` (CUDA_VISIBLE_DEVICES when not
    given) or, when that is unset, from the `gpus` the machine has (counted when not given); a
    ValueError when fewer than `n * per` are visible. On the CPU build: a disjoint set of
    `cores` (this process's affinity when not given) each, cut into one list per rank as vLLM's
    VLLM_CPU_OMP_THREADS_BIND reads them ('|' between ranks); with too few cores to share,
    vLLM binds each replica itself."""
    if vllm_cpu_build():
        if cores is None:
            cores = (
                sorted(os.sched_getaffinity(0))
                if hasattr(os, "sched_getaffinity")
                else range(os.cpu_count() or 1)
            )
        cores = list(cores)
        if len(cores) < n * per:
            return [{} for _ in range(n)]
        share = len(cores) // n
        rank = share // per
        out = []
        for i in range(n):
            mine = cores[i * share : (i + 1) * share]
            ranks = [mine[r * rank : (r + 1) * rank] for r in range(per)]
            out.append(
                {"VLLM_CPU_OMP_THREADS_BIND": "|".join(",".join(map(str, r)) for r in ranks)}
            )
        return out
    if visible is None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    need = n * per
    if visible is None:
        count = _gpu_count() if gpus is None else gpus
        if count < need:
            raise ValueError(f"{_layout(n, per)} needs {need} GPUs; {count} are visible")
        devices = [str(i) for i in range(need)]
    else:
        devices = [d.strip() for d in visible.split(",") if d.strip()]
        if len(devices) < need:
            raise ValueError(
                f"{_layout(n, per)} needs {need} GPUs; CUDA_VISIBLE_DEVICES names {len(devices)}"
            )
    return [{"CUDA_VISIBLE_DEVICES": ",".join(devices[i * per : (i + 1) * per])} for i in range(n)]


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

    def __init__(
        self,
        preset: Preset,
        *,
        data_parallel: int,
        temperature: float = 0.0,
        max_concurrency: int = 64,
        **engine_args,
    ):
        from .launcher import API_KEY_VAR
        from .process import ServerProcess

        if data_parallel < 1:
            raise ValueError("data_parallel must be at least 1")
        # Each replica's share of the GPUs decides its layout (a `LazyEngine` chose it already).
        preset = lay_out(preset, seen("replicas", {"data_parallel": data_parallel}))
        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.temperature = temperature
        self._args = effective_args("replicas", preset, engine_args)
        self.clients: list[OpenAIEngine] = []  # none until every server is ready
        self.servers = [
            ServerProcess(
                preset,
                overrides=self._args,
                # this run's servers alone return masked logits, as p_yes reads them
                # (`confidence.LOGPROBS_MODE`); a server a user starts keeps vLLM's default
                extra=("--logprobs-mode", LOGPROBS_MODE),
                env={**os.environ, **extra},
            )
            for extra in replica_devices(data_parallel, devices_per_replica(self._args))
        ]
        # One thread per replica (none is started before the first call).
        self._pool = ThreadPoolExecutor(len(self.servers), thread_name_prefix="replica")
        try:
            for s in self.servers:  # all start at once; each is waited for
                s.start()
            for s in self.servers:
                s.wait_ready()
            # A key in the caller's environment reaches the replicas (they inherit it, and the
            # server's guard then asks it on every route): their clients must send it.
            keyed = API_KEY_VAR if (os.environ.get(API_KEY_VAR) or "").strip() else None
            self.clients = [
                OpenAIEngine(
                    preset,
                    base_url=s.base_url,
                    temperature=temperature,
                    api_key_env=keyed,
                    max_concurrency=max_concurrency,
                    label_tokens=True,  # servers of this run alone (`OpenAIEngine`)
                    **self._args,
                )
                for s in self.servers
            ]
        except BaseException:
            self.close()
            raise

    @property
    def identity(self) -> str:
        return engine_identity("replicas", self.preset, self.temperature, self._args)

    @property
    def stats(self) -> EngineStats:
        total = EngineStats()
        for c in self.clients:
            for k, v in c.stats.__dict__.items():
                setattr(total, k, getattr(total, k) + v)
        if self.clients:  # the replicas run side by side: wall time is the longest
            total.wall_s = max(c.stats.wall_s for c in self.clients)
        return total

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        parts = shards(len(requests), len(self.clients))
        futures = [
            self._pool.submit(c.judge, [requests[i] for i in r])
            for c, r in zip(self.clients, parts)
        ]
        out: list[Result] = []
        for f in futures:
            out.extend(f.result())
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        for s in self.servers:
            s.stop()
