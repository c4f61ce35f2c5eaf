"""Benchmark: a 3-member judge panel against each member alone, on the same requests.

The members are the local test models, each on its own in-process vLLM engine (CPU here):
the tiny Qwen3-Omni thinker, the tiny Gemma-3 and SmolLM2-135M. The requests are N
verifiability questions (text, so every member can answer each). Each pass gets a fresh verdict
cache (every call reaches its engine) and prefix caching is off, so no pass reuses another's
work. Engines are started and warmed (grammars compiled) before any pass is timed. The panel
sends each member its batches from its own thread: on separate GPUs a panel then costs about
its slowest member; on one machine's CPUs the members compete for the same cores (vLLM's CPU
build binds each engine's worker to cores it picks itself: on 2 cores, every engine to core 0;
`--cores` binds each member's engine to the cores given, to measure members that do not share).

Usage: python scripts/bench_panel.py [--n 400] [--batch-size 256] [--repeat 3] [--cores 0,0,1]
Prints JSON; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import tempfile
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

from murgat_local import offline

offline.enforce()  # engines built here, outside the `murgat` command, stay offline too

MEMBERS = ("tiny-qwen3-omni", "tiny-gemma3", "smollm2-135m-instruct")


def calls(n: int):
    from murgat_local.judges import load_prompt
    from murgat_local.judges.calls import Call

    tpl = load_prompt("verifiable")
    subjects = ["man", "woman", "dog", "car", "ball", "screen", "bird", "child", "door", "cup"]
    colors = ["red", "green", "blue", "yellow", "white", "black", "gray"]
    verbs = ["moves left", "stops", "appears", "falls", "opens", "turns around", "is shown"]
    return [
        Call(
            tpl,
            tpl.render(
                sentence=f"The {colors[i % 7]} {subjects[i % 10]} {verbs[(i // 10) % 7]} "
                f"at second {i % 60}."
            ),
        )
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3, help="alone and panel passes, interleaved")
    ap.add_argument(
        "--cores",
        default=None,
        help="CPU engines only: the cores each member's engine is bound to, e.g. '0,0,1' (default: "
        "vLLM's choice, which on a 2-core machine binds every engine to core 0)",
    )
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    from murgat_local.judges import LazyEngine, load_preset
    from murgat_local.judges.panel import Rule
    from murgat_local.pipeline.cache import VerdictCache
    from murgat_local.pipeline.judging import StageJudge
    from murgat_local.pipeline.panel import PanelJudge

    requests = calls(args.n)
    holders = {m: LazyEngine("vllm", load_preset(m), enable_prefix_caching=False) for m in MEMBERS}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-panel-"))
    passes = 0

    def judge(model: str) -> StageJudge:
        nonlocal passes
        passes += 1
        return StageJudge(
            "verifiable",
            holders[model],
            VerdictCache(tmp / f"pass{passes}.sqlite"),
            batch_size=args.batch_size,
        )

    cores = args.cores.split(",") if args.cores else None
    t0 = time.perf_counter()
    for i, m in enumerate(MEMBERS):  # start-up and grammar compilation are not what is measured
        if cores:  # read by the engine's worker process as it starts
            os.environ["VLLM_CPU_OMP_THREADS_BIND"] = cores[i]
        judge(m).run(calls(8))
    startup = time.perf_counter() - t0

    def median(xs):
        xs = sorted(xs)
        return round((xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2, 2)

    # Alone and panel passes interleaved, `repeat` times: a load that comes and goes on a shared
    # machine falls on both.
    alone_s = {m: [] for m in MEMBERS}
    panel_s = []
    verdicts, same, out = {}, {m: [] for m in MEMBERS}, []
    for _ in range(args.repeat):
        for m in MEMBERS:
            j = judge(m)
            t0 = time.perf_counter()
            done = j.run(requests)
            alone_s[m].append(time.perf_counter() - t0)
            assert j.counters.model_calls == args.n  # a fresh cache: every call reached the engine
            verdicts[m] = [o.raw for o in done]
        panel = PanelJudge("verifiable", [(m, judge(m)) for m in MEMBERS], Rule("majority"))
        t0 = time.perf_counter()
        out = panel.run(requests)
        panel_s.append(time.perf_counter() - t0)
        for m in MEMBERS:  # each member's verdicts in the panel, the same as it gave alone
            same[m].append(sum(dict(o.members)[m].raw == v for o, v in zip(out, verdicts[m])))
    for h in holders.values():
        h.close()

    counters = panel.counters.as_dict()
    alone = {
        m: {"wall_s": [round(x, 2) for x in xs], "median_s": median(xs)}
        for m, xs in alone_s.items()
    }
    total = sum(a["median_s"] for a in alone.values())
    slowest = max(a["median_s"] for a in alone.values())
    wall = median(panel_s)
    result = {
        "requests": args.n,
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
        "cores": dict(zip(MEMBERS, cores)) if cores else "vLLM's binding",
        "startup_and_warmup_s": round(startup, 1),
        "alone": alone,
        "panel": {
            "wall_s": [round(x, 2) for x in panel_s],
            "median_s": wall,
            "votes": counters["votes"],
            "ties": counters["ties"],
            "decided": sum(o.ok for o in out),
            "model_calls": {m: c["model_calls"] for m, c in counters["members"].items()},
            "same_as_alone": same,
        },
        "members_one_after_another_s": round(total, 2),
        "panel_over_sum_of_members": round(wall / total, 3),
        "panel_over_slowest_member": round(wall / slowest, 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
