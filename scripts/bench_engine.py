"""Benchmark: verdicts per second, the same judge requests sent one at a time vs as one batch.

Same engine (vLLM in-process, CPU), same model (SmolLM2-135M-Instruct by default), same
requests, measured side by side in one run. Prints the machine first (CPU model, cores, the
instruction sets that decide vLLM's CPU kernels), then each configuration's figures as soon as
they are measured; asserts nothing.

`--compare` runs several engine configurations one after another in the same run, each a
comma-separated list of engine arguments (`dtype=float32`, `kv_cache_memory_bytes=1073741824`,
`max_num_seqs=128`) and environment variables for the engine's processes
(`env.VLLM_CPU_OMP_THREADS_BIND=nobind`, `env.LD_PRELOAD=/path/libiomp5.so`); `default` is the
engine as murgat starts it. `--emulate avx2` hides AVX-512 (and AMX) from torch, oneDNN and
vLLM's kernel choice, to measure an AVX2-only machine's kernels on one that has more.

Usage: python scripts/bench_engine.py [--n 500] [--model smollm2-135m-instruct]
       [--compare default --compare dtype=float32 ...] [--one-at-a-time N] [--emulate avx2]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
EMULATION = pathlib.Path(__file__).resolve().parent / "cpu_emulation"


def _emulate(kind: str) -> None:
    """Re-runs this script with the AVX2 emulation in the environment of every process."""
    if os.environ.get("MURGAT_EMULATE_CPU") == kind:
        return
    env = dict(os.environ)
    env["MURGAT_EMULATE_CPU"] = kind
    env["ONEDNN_MAX_CPU_ISA"] = "AVX2"
    env["ATEN_CPU_CAPABILITY"] = "avx2"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EMULATION), env.get("PYTHONPATH")]))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def requests(n: int):
    from murgat_local.judges import JudgeRequest, YesNo, load_prompt

    tpl = load_prompt("verifiable")
    subjects = ["man", "woman", "dog", "car", "ball", "screen", "bird", "child", "door", "cup"]
    colors = ["red", "green", "blue", "yellow", "white", "black", "gray"]
    verbs = ["moves left", "stops", "appears", "falls", "opens", "turns around", "is shown"]
    out = []
    for i in range(n):
        s = f"The {colors[i % 7]} {subjects[i % 10]} {verbs[(i // 10) % 7]} at second {i % 60}."
        out.append(JudgeRequest(tpl.render(sentence=s), YesNo, tpl.system))
    return out


def parse_config(text: str) -> tuple[dict, dict]:
    """(engine arguments, environment) of one `--compare` configuration."""
    args: dict = {}
    env: dict = {}
    if text.strip() in ("", "default"):
        return args, env
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--compare: {item!r} is not KEY=VALUE")
        key = key.strip()
        if key.startswith("env."):
            env[key[4:]] = value
            continue
        args[key] = int(value) if value.lstrip("-").isdigit() else value
    return args, env


def measure(model: str, reqs: list, config: str, one_at_a_time: int) -> dict:
    """One configuration: start its engine, warm it, then one at a time and one batch."""
    from murgat_local.judges import load_preset, make_engine

    args, env = parse_config(config)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        t0 = time.perf_counter()
        engine = make_engine("vllm", load_preset(model), **args)
        start_s = time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        dtype = engine._engine_args.get("dtype")  # what the engine chose (the CPU's, or given)
        engine.judge(reqs[:8])  # warm-up: grammar compilation, first-batch allocations
        single_reqs = reqs[:one_at_a_time]
        t0 = time.perf_counter()
        single = [engine.judge([r])[0] for r in single_reqs]
        t_single = time.perf_counter() - t0
        t0 = time.perf_counter()
        batched = engine.judge(reqs)
        t_batch = time.perf_counter() - t0
    finally:
        engine.close()
    one_rate = len(single_reqs) / t_single
    batch_rate = len(reqs) / t_batch
    return {
        "config": config,
        "dtype": dtype,
        "start_s": round(start_s, 1),
        "one_at_a_time_requests": len(single_reqs),
        "one_at_a_time_calls_per_s": round(one_rate, 2),
        "batch_requests": len(reqs),
        "one_batch_calls_per_s": round(batch_rate, 2),
        "speedup": round(batch_rate / one_rate, 2),
        "parsed_single": sum(r.ok for r in single),
        "parsed_batch": sum(r.ok for r in batched),
        "same_verdicts": sum(a.raw == b.raw for a, b in zip(single, batched)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="requests in the batch")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument(
        "--compare",
        action="append",
        metavar="CONFIG",
        help="an engine configuration to measure (repeatable; default: the engine as murgat starts it)",
    )
    ap.add_argument(
        "--one-at-a-time",
        type=int,
        default=None,
        metavar="N",
        help="send only the first N requests one at a time (the rate is per request; default all)",
    )
    ap.add_argument("--emulate", choices=["avx2"], help="hide AVX-512 and AMX from the kernels")
    args = ap.parse_args()
    if args.emulate:
        _emulate(args.emulate)

    from murgat_local import offline

    offline.enforce()  # engines built here, outside the `murgat` command, stay offline too
    from murgat_local.engines.cpu import cpu_info

    info = cpu_info()
    print(f"machine: {info.line()}", flush=True)
    print(f"date: {time.strftime('%Y-%m-%d')}", flush=True)
    reqs = requests(args.n)
    single = min(args.one_at_a_time or args.n, args.n)
    results = []
    for config in args.compare or ["default"]:
        row = measure(args.model, reqs, config, single)
        results.append(row)
        print(json.dumps({"model": args.model, **row}), flush=True)
    print(
        json.dumps({"machine": info.as_dict(), "model": args.model, "results": results}, indent=2)
    )


if __name__ == "__main__":
    main()
