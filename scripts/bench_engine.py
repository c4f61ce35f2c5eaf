"""Benchmark: verdicts per second, the same judge requests sent one at a time vs as one batch.

Same engine (vLLM in-process, CPU), same model (SmolLM2-135M-Instruct by default), same
requests, measured side by side in one run. Prints a ratio; asserts nothing.

Usage: python scripts/bench_engine.py [--n 500] [--model smollm2-135m-instruct]
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

from murgat_local import offline

offline.enforce()  # engines built here, outside the `murgat` command, stay offline too


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    args = ap.parse_args()
    from murgat_local.judges import load_preset, make_engine

    reqs = requests(args.n)
    engine = make_engine("vllm", load_preset(args.model))
    engine.judge(reqs[:8])  # warm-up: grammar compilation, first-batch allocations

    t0 = time.perf_counter()
    single = [engine.judge([r])[0] for r in reqs]
    t_single = time.perf_counter() - t0

    t0 = time.perf_counter()
    batched = engine.judge(reqs)
    t_batch = time.perf_counter() - t0
    engine.close()

    agree = sum(a.raw == b.raw for a, b in zip(single, batched))
    result = {
        "model": args.model,
        "requests": args.n,
        "one_at_a_time_calls_per_s": round(args.n / t_single, 2),
        "one_batch_calls_per_s": round(args.n / t_batch, 2),
        "speedup": round(t_single / t_batch, 2),
        "parsed_single": sum(r.ok for r in single),
        "parsed_batch": sum(r.ok for r in batched),
        "same_verdicts": agree,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
