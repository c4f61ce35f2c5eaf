"""Benchmark: what the engines beyond one process buy, and what the pipeline costs around them.

Three ratios from one run, each measured side by side here (prints figures, asserts nothing):

1. Server concurrency: the same 500 verdict requests on the same `vllm serve` (SmolLM2-135M,
   started by the launcher `murgat serve` uses), sent by the server engine one at a time
   (`max_concurrency = 1`) and with async concurrency (`--concurrency`, default 32).
2. The orchestration limit: the real `Runner` scores N responses on in-process vLLM engines
   (SmolLM2 for the text stages, the tiny Qwen3-Omni for attribution on cut media); every
   `LLM.generate` call it makes is recorded, then the same engines run exactly those prompts
   and sampling parameters, in the same batches, with nothing around them. Ratio = raw
   generate time / pipeline wall time (target: at least 0.8).
3. Python-side overhead: the Runner over 10,000 responses with an engine that replays
   verdicts at once (scripts/bench_stream.py's), i.e. what the pipeline costs per response
   when the judge is free.

Usage: python scripts/bench_scale.py [--requests 500] [--concurrency 32] [--responses 48]
       [--overhead-responses 10000] [--skip server,orchestration,overhead]
       [--engine-arg KEY=VALUE ...]

Both sides of the orchestration ratio start from an empty prefix cache (the replay sends the
pipeline's exact prompts, which the cache would otherwise serve almost whole).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


def bench_server(n: int, concurrency: int, engine_args: dict) -> dict:
    from murgat_local.engines import load_preset, make_engine
    from murgat_local.engines.base import Request
    from murgat_local.judges import YesNo
    from murgat_local.serving import ServerProcess

    preset = load_preset("smollm2-135m-instruct")
    requests = [
        Request(
            f"Claim {i}: the screen in take {i} is {['red', 'blue', 'green'][i % 3]}. "
            "Is the claim true? Answer YES or NO.",
            YesNo,
        )
        for i in range(n)
    ]
    with (
        tempfile.TemporaryDirectory() as tmp,
        ServerProcess(preset, log=pathlib.Path(tmp) / "serve.log", overrides=engine_args) as server,
    ):
        one = make_engine("openai", preset, base_url=server.base_url, max_concurrency=1)
        many = make_engine("openai", preset, base_url=server.base_url, max_concurrency=concurrency)
        many.judge(requests[:16])  # warm: grammar compiled, caches filled
        t0 = time.perf_counter()
        a = one.judge(requests)
        sequential = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = many.judge(requests)
        concurrent = time.perf_counter() - t0
    return {
        "requests": n,
        "concurrency": concurrency,
        "one_at_a_time_req_per_s": round(n / sequential, 1),
        "concurrent_req_per_s": round(n / concurrent, 1),
        "ratio": round(sequential / concurrent, 2),
        "ok": [sum(r.ok for r in a), sum(r.ok for r in b)],
    }


class _Recorder:
    """Wraps an engine's batch call to vLLM: records each (prompts, params) and its time."""

    def __init__(self, engine):
        self.engine = engine
        self.calls: list[tuple[list, list]] = []
        self.seconds = 0.0
        self._original = engine._generate
        engine._generate = self

    def __call__(self, prompts, params):
        t0 = time.perf_counter()
        out = self._original(prompts, params)
        self.seconds += time.perf_counter() - t0
        self.calls.append((prompts, params))
        return out

    def replay(self) -> float:
        # The pipeline's run filled the prefix cache with exactly these prompts: start the replay
        # from the same empty cache the pipeline's run started from, or it measures cache hits.
        self.engine.llm.reset_prefix_cache()
        t0 = time.perf_counter()
        for prompts, params in self.calls:
            self.engine.llm.generate(prompts, params, use_tqdm=False)
        return time.perf_counter() - t0


def bench_orchestration(n: int, engine_args: dict) -> dict:
    from bench_stream import MEDIA, write_responses

    from murgat_local.config import RunConfig
    from murgat_local.engines import LazyEngine, load_preset
    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline.runner import Runner

    text, media = "smollm2-135m-instruct", "tiny-qwen3-omni"
    holders = {m: LazyEngine("vllm", load_preset(m), **engine_args) for m in (text, media)}
    for h in holders.values():
        h.get()
    cfg_args = {"judge": media, "verifier": text, "decomposer": text, "bootstrap_resamples": 0}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        # Warm-up on other responses: grammars compiled, first-batch costs paid.
        warm = write_responses(work / "warm.jsonl", 8, 3)
        Runner(
            RunConfig(cache=work / "warm.sqlite", **cfg_args),
            MEDIA,
            work / "warm",
            engines=holders,
            summary=RunSummary,
        ).run(warm)
        responses = work / "r.jsonl"
        with responses.open("w") as fh:  # responses not seen in the warm-up
            from bench_stream import make_response

            for i in range(1000, 1000 + n):
                fh.write(json.dumps(make_response(i, 3)) + "\n")
        recorders = {m: _Recorder(h.get()) for m, h in holders.items()}
        for h in holders.values():  # both measurements start from an empty prefix cache
            h.get().llm.reset_prefix_cache()
        runner = Runner(
            RunConfig(cache=work / "run.sqlite", **cfg_args),
            MEDIA,
            work / "run",
            engines=holders,
            summary=RunSummary,
        )
        t0 = time.perf_counter()
        result = runner.run(responses)
        pipeline = time.perf_counter() - t0
        verdicts = sum(s["model_calls"] for s in result.summary["stages"].values())
        in_generate = sum(r.seconds for r in recorders.values())
        raw = sum(r.replay() for r in recorders.values())
    for h in holders.values():
        h.close()
    return {
        "responses": n,
        "verdicts": verdicts,
        "generate_calls": sum(len(r.calls) for r in recorders.values()),
        "pipeline_wall_s": round(pipeline, 2),
        "generate_inside_pipeline_s": round(in_generate, 2),
        "raw_generate_s": round(raw, 2),
        "pipeline_verdicts_per_s": round(verdicts / pipeline, 2),
        "raw_verdicts_per_s": round(verdicts / raw, 2),
        "ratio": round(raw / pipeline, 3),
    }


def bench_overhead(n: int) -> dict:
    from bench_stream import MEDIA, ReplayedEngine, write_responses

    from murgat_local.config import RunConfig
    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline.runner import Runner

    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        responses = write_responses(work / "r.jsonl", n, 3)
        engine = ReplayedEngine()
        runner = Runner(
            RunConfig(judge="replay", cache=work / "v.sqlite"),
            MEDIA,
            work / "out",
            engines={"replay": engine},
            summary=RunSummary,
        )
        t0 = time.perf_counter()
        result = runner.run(responses)
        wall = time.perf_counter() - t0
        runner.close()
    calls = sum(s["model_calls"] for s in result.summary["stages"].values())
    python = wall - engine.stats.wall_s
    return {
        "responses": n,
        "verdicts": calls,
        "wall_s": round(wall, 2),
        "replay_engine_s": round(engine.stats.wall_s, 2),
        "overhead_ms_per_response": round(1000 * python / n, 3),
        "overhead_ms_per_verdict": round(1000 * python / calls, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--responses", type=int, default=48)
    ap.add_argument("--overhead-responses", type=int, default=10_000)
    ap.add_argument("--skip", default="")
    ap.add_argument(
        "--engine-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a vLLM engine argument for the server and the orchestration engines, e.g. block_size=128",
    )
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    engine_args = {
        k: int(v) if v.lstrip("-").isdigit() else v
        for k, v in (a.split("=", 1) for a in args.engine_arg)
    }
    from murgat_local import offline

    offline.enforce()
    skip = set(filter(None, args.skip.split(",")))
    out = {}
    if "server" not in skip:
        out["server_concurrency"] = bench_server(args.requests, args.concurrency, engine_args)
        print(json.dumps({"server_concurrency": out["server_concurrency"]}), flush=True)
    if "orchestration" not in skip:
        out["orchestration_limit"] = bench_orchestration(args.responses, engine_args)
        print(json.dumps({"orchestration_limit": out["orchestration_limit"]}), flush=True)
    if "overhead" not in skip:
        out["python_overhead"] = bench_overhead(args.overhead_responses)
        print(json.dumps({"python_overhead": out["python_overhead"]}), flush=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
