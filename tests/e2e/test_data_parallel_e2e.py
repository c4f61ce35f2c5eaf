"""Data parallelism on real vLLM replicas: a batch split across two CPU replicas, and `murgat score
--data-parallel`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.cli import JUDGES
from support.paths import ROOT, require_model

from murgat_local.engines import LazyEngine, load_preset
from murgat_local.judges import JudgeRequest

pytestmark = pytest.mark.memory_heavy(
    "four `vllm serve` replicas at once: two models, two replicas each, beside a scorer"
)


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
    env = dict(os.environ, COLUMNS="200")

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
                *JUDGES,
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
