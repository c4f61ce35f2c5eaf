"""Batching must pay on the CPU this runs on: the same engine judges the same 32 requests one at
a time and then in one batch, and the batch must take at most half as long. A ratio, never a
time: both passes run side by side on the same warm engine, so a slow or busy machine slows
both. On an AVX2-only CPU, bfloat16 judging was about as slow batched as one at a time (1.3x);
the engine then runs in the dtype chosen for the CPU (`engines.cpu`), checked here from vLLM's
own model configuration. In process (the session's pooled SmolLM2 engine) and on `vllm serve`.
"""

from __future__ import annotations

import os
import time

import pytest
from support.paths import require_model

from murgat_local.engines import LazyEngine, load_preset
from murgat_local.engines.cpu import best_dtype, cpu_info
from murgat_local.judges import JudgeRequest, YesNo, load_prompt

pytestmark = [pytest.mark.engine, pytest.mark.slow]

MODEL = "smollm2-135m-instruct"
N = 32
LEAST_SPEEDUP = 2.0


def requests() -> list[JudgeRequest]:
    tpl = load_prompt("verifiable")
    things = ["man", "dog", "car", "ball", "screen", "bird", "child", "door"]
    acts = ["moves left", "stops", "appears", "falls"]
    return [
        JudgeRequest(
            tpl.render(sentence=f"The {things[i % 8]} {acts[i // 8]} at second {i}."),
            YesNo,
            tpl.system,
        )
        for i in range(N)
    ]


def speedup(engine) -> tuple[float, list, list]:
    """(one-at-a-time time / batch time, the single results, the batch's), on a warm engine:
    the best of two batches, so a moment of the other worker's load does not decide it."""
    reqs = requests()
    engine.judge(reqs[:4])  # warm: the grammar compiled, the first allocations made
    t0 = time.perf_counter()
    single = [engine.judge([r])[0] for r in reqs]
    t_single = time.perf_counter() - t0
    best, batched = float("inf"), []
    for _ in range(2):
        t0 = time.perf_counter()
        batched = engine.judge(reqs)
        best = min(best, time.perf_counter() - t0)
    return t_single / best, single, batched


def test_batching_pays_in_process_and_the_engine_runs_the_cpus_dtype(engine_pool):
    require_model(MODEL)
    engine = engine_pool.get(MODEL, "vllm")
    chosen = best_dtype(cpu_info())[0]
    # what the judge's identity (and so its cache key) records ...
    assert LazyEngine("vllm", load_preset(MODEL)).identity_detail["engine_args"]["dtype"] == chosen
    # vLLM's own configuration of the running model, not murgat's arguments
    assert str(engine.llm.llm_engine.model_config.dtype) == f"torch.{chosen}"
    ratio, single, batched = speedup(engine)
    assert all(r.ok for r in single + batched)
    assert ratio >= LEAST_SPEEDUP, (
        f"one batch of {N} was only {ratio:.2f}x faster than one request at a time "
        f"({cpu_info().line()}, dtype {chosen})"
    )


def test_batching_pays_on_vllm_serve():
    from murgat_local.serving import ServerProcess

    require_model(MODEL)
    with ServerProcess(load_preset(MODEL), env=dict(os.environ)) as server:
        holder = LazyEngine("openai", load_preset(MODEL), base_url=server.base_url)
        try:
            ratio, single, batched = speedup(holder.get())
        finally:
            holder.close()
    assert all(r.ok for r in single + batched)
    assert ratio >= LEAST_SPEEDUP, (
        f"one batch of {N} on vllm serve was only {ratio:.2f}x faster than one at a time "
        f"({cpu_info().line()})"
    )
