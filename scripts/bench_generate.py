"""Benchmark: responses per second and output tokens per second for a whole dataset, generated
in stage-wise batches vs one request at a time, with the same model, side by side in one run.

Both passes go through the real `murgat generate` pipeline (media cut from the sample videos,
the same prompts), each with a fresh cache; only `batch_size` differs. Prints the figures and
their ratios; asserts nothing.

Program-aided items (`--program-items N`, 0 to skip): the same fixed logic plan (three queries
on cut spans, then an answer) run for N questions through the real tools, with every item's
tool calls gathered into rounds vs one item at a time; prints tool calls per second and the
share of each item's time spent waiting for the model vs in the interpreter.

Usage: python scripts/bench_generate.py [--items 100] [--model tiny-qwen3-omni] [--max-tokens 64]
                                        [--program-items 16]
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

offline.enforce()

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLORS = ["red", "green", "blue", "yellow", "cyan", "magenta", "white", "black"]


def dataset(path: pathlib.Path, n: int) -> None:
    videos = ["colors", "speech", "late_audio", "silent"]
    with path.open("w") as fh:
        for i in range(n):
            second = i % 8
            fh.write(
                json.dumps(
                    {
                        "id": f"b{i}",
                        "video": videos[i % len(videos)],
                        "question": f"What colour fills the screen at second {second} (question {i})?",
                        "options": [COLORS[(second + k) % 8] for k in range(4)],
                        "answer": "A",
                    }
                )
                + "\n"
            )


PLAN = """def main(video):
    notes = []
    for t in ["0:0{a}-0:0{b}", "0:0{b}"]:
        notes.append(video.query(t, "What colour fills the screen?", "visual"))
    notes.append(video.query("0:0{a}-0:0{b}", "Is a tone heard?", "audio"))
    return answer("Which colour?", notes, [])
"""


def program_pass(engine, model: str, n: int, tmp: pathlib.Path, rounds: bool) -> dict:
    """Run the fixed plan for n items through the real tools: all at once (rounds) or one by one."""
    import statistics

    from murgat_local.engines import Sampling, load_preset
    from murgat_local.generate.media import plan_media
    from murgat_local.generate.program_tools import TOOL_PROMPTS
    from murgat_local.generate.strategies import Strategy
    from murgat_local.generate_config import GenerateConfig
    from murgat_local.judges import load_prompt
    from murgat_local.judges.calls import Outcome
    from murgat_local.media.segments import SegmentCutter
    from murgat_local.pipeline.cache import VerdictCache
    from murgat_local.pipeline.judging import StageJudge
    from murgat_local.pipeline.programs import ProgramJob, execute

    cfg = GenerateConfig(models=[model])
    cutter = SegmentCutter(ROOT / ".local" / "sample_media", cfg.media.options())
    cache = VerdictCache(tmp / f"program-{rounds}.sqlite")
    judge = StageJudge("program", engine, cache, batch_size=256)
    prompts = {p: load_prompt(p) for p in TOOL_PROMPTS}
    preset = load_preset(model)
    jobs = []
    for i in range(n):
        ref = cutter.source(["colors", "speech", "late_audio"][i % 3])
        a = i % 6
        jobs.append(
            ProgramJob(
                i,
                Strategy("program", "logic-declarative"),
                Outcome(raw=PLAN.format(a=a, b=a + 1)),
                ref,
                plan_media(cutter, ref, preset),
                f"Question {i}: which colour?",
                ["red", "green", "blue", "white"],
                Sampling(seed=i),
            )
        )
    t0 = time.perf_counter()
    if rounds:
        done = execute(jobs, judge, cutter, prompts, cfg.limits())
    else:
        done = {}
        for job in jobs:
            done.update(execute([job], judge, cutter, prompts, cfg.limits()))
    wall = time.perf_counter() - t0
    cutter.close()
    cache.close()
    times = [r.record["time"] for r in done.values()]
    calls = sum(len(r.record["trace"]["calls"]) for r in done.values())
    return {
        "items": n,
        "tool_calls": calls,
        "model_calls": judge.counters.model_calls,
        "wall_s": round(wall, 2),
        "tool_calls_per_s": round(calls / wall, 2),
        "completed": sum(r.error is None for r in done.values()),
        "median_share_model": round(
            statistics.median(t["model_s"] / t["wall_s"] for t in times), 4
        ),
        "median_share_interpreter": round(
            statistics.median(t["interpreter_s"] / t["wall_s"] for t in times), 6
        ),
        "median_interpreter_ms": round(
            1000 * statistics.median(t["interpreter_s"] for t in times), 3
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--model", default="tiny-qwen3-omni")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--program-items", type=int, default=16)
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    from murgat_local.engines import LazyEngine, load_preset
    from murgat_local.generate_config import GenerateConfig
    from murgat_local.metrics.run_summary import GenerationGrades
    from murgat_local.pipeline.generating import GenerateRunner

    media = ROOT / ".local" / "sample_media"
    engine = LazyEngine("vllm", load_preset(args.model), enable_prefix_caching=False)
    engines = {args.model: engine}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        data = tmp / "questions.jsonl"
        dataset(data, args.items)
        warm = tmp / "warm.jsonl"
        dataset(warm, 4)
        for name, batch in (("warm-up", 256), ("one at a time", 1), ("batched", 256)):
            cfg = GenerateConfig(
                models=[args.model],
                strategies=["cite"],
                batch_size=batch,
                sampling={"max_tokens": args.max_tokens},
                answer_judge=None,
                max_failed_calls=1.0,
            )
            runner = GenerateRunner(
                cfg,
                media,
                tmp / f"{name}.jsonl".replace(" ", "_"),
                engines=engines,
                grades=GenerationGrades(),
            )
            before = engine.stats.output_tokens if engine.started else 0
            t0 = time.perf_counter()
            result = runner.run(warm if name == "warm-up" else data)
            wall = time.perf_counter() - t0
            runner.close(engines=False)
            if name == "warm-up":
                continue
            calls = result.summary["calls"][f"generate:{args.model}"]
            tokens = engine.stats.output_tokens - before
            results[name] = {
                "responses": calls["model_calls"],
                "wall_s": round(wall, 2),
                "responses_per_s": round(calls["model_calls"] / wall, 3),
                "output_tokens": tokens,
                "output_tokens_per_s": round(tokens / wall, 1),
            }
        program = {}
        if args.program_items:
            program["one item at a time"] = program_pass(
                engine, args.model, args.program_items, tmp, rounds=False
            )
            program["rounds"] = program_pass(
                engine, args.model, args.program_items, tmp, rounds=True
            )
            program["speedup_tool_calls"] = round(
                program["rounds"]["tool_calls_per_s"]
                / program["one item at a time"]["tool_calls_per_s"],
                2,
            )
    engine.close()
    one, batched = results["one at a time"], results["batched"]
    print(
        json.dumps(
            {
                "model": args.model,
                "items": args.items,
                "max_tokens": args.max_tokens,
                **results,
                "speedup_responses": round(batched["responses_per_s"] / one["responses_per_s"], 2),
                "speedup_tokens": round(
                    batched["output_tokens_per_s"] / one["output_tokens_per_s"], 2
                ),
                "program": program,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
