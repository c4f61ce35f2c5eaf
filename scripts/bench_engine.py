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
       [--compare default --compare dtype=float32 ...] [--one-at-a-time N] [--interleave R]
       [--emulate avx2]
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
    """Re-runs this script with the emulation in the environment of every process."""
    from murgat_local.engines.cpu import EMULATE_ENV, emulation_env

    if os.environ.get(EMULATE_ENV) != kind:
        env = emulation_env(kind, str(EMULATION), dict(os.environ))
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


def start(model: str, config: str):
    """(engine, seconds to start) for one configuration, its environment set only for the start
    (the engine's processes inherit it)."""
    from murgat_local.judges import load_preset, make_engine

    args, env = parse_config(config)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        t0 = time.perf_counter()
        engine = make_engine("vllm", load_preset(model), **args)
        return engine, time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def passes(engine, reqs: list, one_at_a_time: int) -> tuple[float, float, list, list]:
    """(one-at-a-time seconds, batch seconds, their results) on a warm engine."""
    single_reqs = reqs[:one_at_a_time]
    t0 = time.perf_counter()
    single = [engine.judge([r])[0] for r in single_reqs]
    t_single = time.perf_counter() - t0
    t0 = time.perf_counter()
    batched = engine.judge(reqs)
    return t_single, time.perf_counter() - t0, single, batched


def row(model, config, engine, start_s, reqs, n_single, times, single, batched) -> dict:
    """One configuration's figures; `times`: (one-at-a-time s, batch s) per round, the median
    round's rates reported."""
    one = sorted(n_single / t for t, _ in times)[len(times) // 2]
    batch = sorted(len(reqs) / t for _, t in times)[len(times) // 2]
    return {
        "model": model,
        "config": config,
        "dtype": engine._engine_args.get("dtype"),  # what the engine chose (the CPU's, or given)
        "start_s": round(start_s, 1),
        "rounds": len(times),
        "one_at_a_time_requests": n_single,
        "one_at_a_time_calls_per_s": round(one, 2),
        "batch_requests": len(reqs),
        "one_batch_calls_per_s": round(batch, 2),
        "speedup": round(batch / one, 2),
        "parsed_single": sum(r.ok for r in single),
        "parsed_batch": sum(r.ok for r in batched),
        "same_verdicts": sum(a.raw == b.raw for a, b in zip(single, batched)),
    }


def measure(model: str, reqs: list, config: str, one_at_a_time: int) -> dict:
    """One configuration on its own: start its engine, warm it, one at a time, one batch."""
    engine, start_s = start(model, config)
    try:
        engine.judge(reqs[:8])  # warm-up: grammar compilation, first-batch allocations
        t1, t2, single, batched = passes(engine, reqs, one_at_a_time)
        return row(model, config, engine, start_s, reqs, one_at_a_time, [(t1, t2)], single, batched)
    finally:
        engine.close()


def interleaved(model: str, reqs: list, configs: list, one_at_a_time: int, rounds: int) -> list:
    """Every configuration's engine up at once, then `rounds` rounds in which each is measured
    in turn (the order rotating), so load that comes and goes falls on all of them alike."""
    from murgat_local.engines import close_all

    engines = []
    try:
        for config in configs:
            engine, start_s = start(model, config)
            engine.judge(reqs[:8])
            engines.append((config, engine, start_s))
        times: dict[str, list] = {c: [] for c in configs}
        last: dict[str, tuple] = {}
        for r in range(rounds):
            for config, engine, _ in engines[r % len(engines) :] + engines[: r % len(engines)]:
                t1, t2, single, batched = passes(engine, reqs, one_at_a_time)
                times[config].append((t1, t2))
                last[config] = (single, batched)
                print(
                    f"round {r + 1} {config}: {one_at_a_time / t1:.2f} one at a time, "
                    f"{len(reqs) / t2:.2f} batched (calls/s)",
                    flush=True,
                )
        return [row(model, c, e, s, reqs, one_at_a_time, times[c], *last[c]) for c, e, s in engines]
    finally:
        close_all([e for _, e, _ in engines])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="requests in the batch")
    ap.add_argument(
        "--model",
        action="append",
        help="preset(s) to measure, each with every configuration (default smollm2-135m-instruct)",
    )
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
    ap.add_argument(
        "--interleave",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="start every configuration's engine at once and measure them in turn, ROUNDS times "
        "(medians reported): side by side on a machine whose load varies",
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
    for model in args.model or ["smollm2-135m-instruct"]:
        configs = args.compare or ["default"]
        if args.interleave:
            rows = interleaved(model, reqs, configs, single, args.interleave)
            for r in rows:
                print(json.dumps(r), flush=True)
            results.extend(rows)
            continue
        for config in configs:
            r = measure(model, reqs, config, single)
            results.append(r)
            print(json.dumps(r), flush=True)
    print(json.dumps({"machine": info.as_dict(), "results": results}, indent=2))


if __name__ == "__main__":
    main()
