"""Benchmark the scoring pipeline against the reference's patterns, side by side in one run.

1. judge throughput: the pipeline (stage-wise batches) vs the very same judge requests sent one
   at a time to the same engines (the reference's pattern);
2. segment extraction: in-memory cutting (PyAV) vs one `ffmpeg` subprocess per
   citation re-encoding the segment (the reference's method), same citations;
3. a re-run served from the cache vs the cold run;
4. peak RSS of a scoring run at N and 10N responses.

Prints the machine first (CPU model, cores, the instruction sets that decide vLLM's CPU
kernels), then each part's figures as soon as it is measured, then all of them; asserts nothing.
p_yes's cost (batched judging with and without it) is measured only when asked: `--only p_yes`.
Needs the local test models and sample media (scripts/setup.sh).
Usage: python scripts/bench.py [--responses 60] [--citations 300] [--only judges|segments|cache|p_yes]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

from murgat_local import offline

offline.enforce()  # engines built here, outside the `murgat` command, stay offline too

ROOT = pathlib.Path(__file__).resolve().parents[1]
EMULATION = ROOT / "scripts" / "cpu_emulation"
MEDIA = ROOT / ".local" / "sample_media"

SUBJECTS = ["screen", "background", "frame", "picture", "panel", "display"]
COLORS = ["red", "green", "blue", "yellow", "cyan", "magenta", "white", "black"]


def make_responses(n: int, distinct: int | None = None, seed: int = 0) -> list[dict]:
    """Responses about colors.mp4 whose sentences vary, so few requests repeat."""
    out = []
    for i in range(n):
        k = i % distinct if distinct else i
        r = random.Random(seed * 7919 + k)
        parts = []
        for j in range(4):
            sec = r.randrange(0, 8)
            color = COLORS[sec] if r.random() < 0.6 else r.choice(COLORS)
            subj = SUBJECTS[(k + j) % len(SUBJECTS)]
            if r.random() < 0.3:
                cite = f"(visual, 0:0{sec}; audio, 0:0{sec}-0:0{min(sec + 1, 8)})"
            elif r.random() < 0.5:
                cite = f"(visual, 0:0{sec}-0:0{min(sec + 1, 8)})"
            else:
                cite = f"(visual, 0:0{sec})"
            parts.append(f"The {subj} is {color} in clip {k} part {j} {cite}.")
        parts.append("Therefore the answer is A.")
        out.append(
            {"id": f"r{i}", "video": "colors", "model_generation": " ".join(parts) + "\nAnswer: A"}
        )
    return out


def write_jsonl(path: pathlib.Path, rows: list[dict]) -> pathlib.Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class Recording:
    """Wraps an engine; keeps every request the pipeline sends and, per stage, what its batches
    cost inside vLLM: prompt and output tokens per call, prompt tokens served by the prefix
    cache (vLLM's `num_cached_tokens`), batch sizes, engine steps, and the one-token grammar
    warm-ups sent beside them."""

    def __init__(self, engine, stage_of):
        self.engine = engine
        self.requests = []
        self.stage_of = stage_of
        self.stages: dict[str, dict] = {}
        self.current = None
        self.steps = 0
        llm = getattr(engine, "llm", None)
        if llm is not None:
            generate, step = llm.generate, llm.llm_engine.step

            def counted_step(*a, **k):
                self.steps += 1
                return step(*a, **k)

            def recorded(prompts, params=None, **kw):
                before = self.steps
                outs = generate(prompts, params, **kw)
                kind = (
                    "warm"
                    if params and all(getattr(p, "max_tokens", 0) == 1 for p in params)
                    else "judge"
                )
                st = self.stages.setdefault(self.current or "?", _stage_stats())
                st[f"{kind}_batches"].append(len(outs))
                st[f"{kind}_steps"] += self.steps - before
                for o in outs:
                    st[f"{kind}_prompt_tokens"] += len(o.prompt_token_ids or [])
                    st[f"{kind}_cached_tokens"] += o.num_cached_tokens or 0
                    st[f"{kind}_output_tokens"] += sum(len(c.token_ids) for c in o.outputs)
                return outs

            llm.llm_engine.step = counted_step
            llm.generate = recorded

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def judge(self, requests):
        self.requests.extend(requests)
        self.current = self.stage_of(requests[0]) if requests else None
        return self.engine.judge(requests)


def _stage_stats() -> dict:
    return {
        f"{k}_{m}": ([] if m == "batches" else 0)
        for k in ("judge", "warm")
        for m in ("batches", "steps", "prompt_tokens", "cached_tokens", "output_tokens")
    }


def stage_report(recordings) -> dict:
    """Per stage: calls, tokens per call, prefix-cache hit rate, batch sizes, steps per batch."""
    out: dict[str, dict] = {}
    for rec in recordings:
        for stage, st in rec.stages.items():
            calls = sum(st["judge_batches"])
            if not calls:
                continue
            out[stage] = {
                "calls": calls,
                "batches": len(st["judge_batches"]),
                "mean_batch": round(calls / len(st["judge_batches"]), 1),
                "prompt_tokens_per_call": round(st["judge_prompt_tokens"] / calls, 1),
                "output_tokens_per_call": round(st["judge_output_tokens"] / calls, 2),
                "prefix_cache_hit_rate": round(
                    st["judge_cached_tokens"] / max(st["judge_prompt_tokens"], 1), 3
                ),
                "engine_steps_per_batch": round(st["judge_steps"] / len(st["judge_batches"]), 1),
                "grammar_warmups": sum(st["warm_batches"]),
            }
    return out


class RecordingLazy:
    def __init__(self, lazy, stage_of):
        self.lazy = lazy
        self.identity = lazy.identity
        self.stage_of = stage_of
        self.rec = None

    @property
    def started(self):
        return self.lazy.started

    @property
    def stats(self):
        return self.lazy.stats

    def get(self):
        if self.rec is None:
            self.rec = Recording(self.lazy.get(), self.stage_of)
        return self.rec

    def close(self):
        self.lazy.close()

    def __getattr__(self, name):
        """The rest of the holder (`EngineHolder`: kind, modalities, check_response, ...) is the
        wrapped `LazyEngine`'s."""
        return getattr(self.lazy, name)


def bench_judges(
    work: pathlib.Path,
    n_responses: int,
    engine_args: dict | None = None,
    one_at_a_time: bool = True,
    p_yes_repeats: int = 3,
    with_p_yes: bool = False,
) -> dict:
    """The pipeline batched vs one request at a time; with `with_p_yes` (`--only p_yes`), then
    p_yes's cost (`bench_p_yes`), and `one_at_a_time=False` leaves the slow pass out."""
    from murgat_local.config import RunConfig
    from murgat_local.judges import LazyEngine, load_preset
    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline.runner import Runner

    cfg = RunConfig(
        judge="tiny-qwen3-omni",
        verifier="smollm2-135m-instruct",
        decomposer="smollm2-135m-instruct",
        decontextualize=False,
    )
    from murgat_local.judges import load_prompt

    systems = {}
    for stage, prompt in (
        ("verifiable", "verifiable"),
        ("decompose", "decompose"),
        ("entail", "entail"),
        ("decontext", "decontextualize"),
    ):
        systems[load_prompt(prompt).system] = stage
    stage_of = lambda req: systems.get(req.system, "?")  # noqa: E731
    engines = {
        m: RecordingLazy(LazyEngine("vllm", load_preset(m), **(engine_args or {})), stage_of)
        for m in ("tiny-qwen3-omni", "smollm2-135m-instruct")
    }
    for e in engines.values():
        e.get()  # engine start-up is not what is compared
    responses = write_jsonl(work / "judge.jsonl", make_responses(n_responses))
    runner = Runner(cfg, MEDIA, work / "judge_out", engines=engines, summary=RunSummary)
    t0 = time.perf_counter()
    result = runner.run(responses)
    t_pipeline = time.perf_counter() - t0
    per_stage = stage_report([e.rec for e in engines.values()])
    calls = sum(len(e.rec.requests) for e in engines.values())
    # The reference's pattern: the same requests, one request per call, one after another.
    t0 = time.perf_counter()
    for e in engines.values():
        for req in e.rec.requests if one_at_a_time else ():
            e.rec.engine.judge([req])
    t_single = time.perf_counter() - t0 if one_at_a_time else math.nan
    p_yes_cost = bench_p_yes(engines, p_yes_repeats) if with_p_yes else None
    for e in engines.values():
        e.close()
    runner.cache.close()
    return {
        "judge_calls": calls,
        "pipeline_s": round(t_pipeline, 2),
        "one_at_a_time_s": round(t_single, 2),
        "pipeline_calls_per_s": round(calls / t_pipeline, 2),
        "one_at_a_time_calls_per_s": round(calls / t_single, 2),
        "speedup": round(t_single / t_pipeline, 2),
        "stages": {s: c["model_calls"] for s, c in result.summary["stages"].items()},
        "per_stage": per_stage,
        "p_yes": p_yes_cost,
    }


def bench_p_yes(engines: dict, repeats: int = 3) -> dict:
    """Batched judging with and without p_yes, side by side on the same warm engines, two ways:
    the run's yes/no requests alone (each engine's in one batch: the worst case), and the
    judges' whole batched run (every stage's requests as the pipeline sent them, one batch per
    stage and engine: what the goal is about). Without p_yes, a yes/no request gets a verdict
    type that asks no log-probabilities (the same grammar); the other requests are the same
    either way. The label-token method is also timed against the top 5 alternatives. The order
    alternates and the best of `repeats` counts, so warm-up and noise do not decide."""
    import dataclasses

    from murgat_local.judges.verdicts import ReasonedYesNo, YesNo

    class PlainYesNo(YesNo):
        yes_no = False

    class PlainReasonedYesNo(ReasonedYesNo):
        yes_no = False

    plain = {YesNo: PlainYesNo, ReasonedYesNo: PlainReasonedYesNo}

    def without(reqs: list) -> list:
        return [
            dataclasses.replace(r, verdict=plain[r.verdict]) if r.verdict in plain else r
            for r in reqs
        ]

    # (engine, batches as asked, the same batches without p_yes), per way of measuring
    ways: dict[str, list] = {"yes/no": [], "whole": []}
    for e in engines.values():
        asked = [r for r in e.rec.requests if r.verdict in plain]
        if asked:
            ways["yes/no"].append((e.rec.engine, [asked], [without(asked)]))
        stages: dict[str, list] = {}
        for r in e.rec.requests:
            stages.setdefault(e.stage_of(r), []).append(r)
        ways["whole"].append(
            (e.rec.engine, list(stages.values()), [without(b) for b in stages.values()])
        )
    if not ways["yes/no"]:
        return {"calls": 0}

    def judge_all(way: str, name: str) -> None:
        for engine, asked, plain_batches in ways[way]:
            found = engine.label_ids  # found once, before any timing
            if name == "top5":  # the method before the label tokens: the top 5 alternatives
                engine.__dict__["label_ids"] = None
            try:
                for batch in plain_batches if name == "without" else asked:
                    engine.judge(batch)
            finally:
                engine.__dict__["label_ids"] = found

    names = ("with", "without", "top5")
    best = {(w, n): math.inf for w in ways for n in names}
    for i in range(repeats):
        for way in ways:
            for name in names[i % 3 :] + names[: i % 3]:  # each goes first in turn
                t0 = time.perf_counter()
                judge_all(way, name)
                best[way, name] = min(best[way, name], time.perf_counter() - t0)
    calls = sum(len(b) for _, batches, _ in ways["yes/no"] for b in batches)
    whole_calls = sum(len(b) for _, batches, _ in ways["whole"] for b in batches)
    out: dict = {"calls": calls, "whole_run_calls": whole_calls}
    for way, label in (("yes/no", ""), ("whole", "whole_run_")):
        w, wo, t5 = (best[way, n] for n in names)
        print(
            f"batched judging, {'yes/no requests' if way == 'yes/no' else 'the whole run'} "
            f"({calls if way == 'yes/no' else whole_calls} calls): {w:.2f} s with p_yes, "
            f"{wo:.2f} s without (ratio {w / wo:.3f}; goal <= 1.05); with the top 5 instead "
            f"of the label tokens {t5:.2f} s (ratio {t5 / wo:.3f})",
            flush=True,
        )
        out.update(
            {
                f"{label}with_p_yes_s": round(w, 3),
                f"{label}without_p_yes_s": round(wo, 3),
                f"{label}top5_s": round(t5, 3),
                f"{label}ratio": round(w / wo, 3),
                f"{label}ratio_top5": round(t5 / wo, 3),
            }
        )
    return out


def bench_segments(work: pathlib.Path, n: int) -> dict:
    from murgat_local.media.segments import SegmentCutter
    from murgat_local.text.citations import Citation

    rng = random.Random(1)
    seen, cits = set(), []
    while len(cits) < n:
        video = rng.choice(["colors", "late_audio", "speech"])
        dur = 4.0 if video == "speech" else 8.0
        modality = rng.choice(["visual", "visual", "audio"])
        start = round(rng.uniform(0, dur - 1.5), 1)
        end = (
            start
            if (modality == "visual" and rng.random() < 0.5)
            else round(start + rng.uniform(0.5, 1.5), 1)
        )
        if (video, modality, start, end) in seen:
            continue
        seen.add((video, modality, start, end))
        cits.append((video, Citation(modality, start, end, f"({modality}, {start}-{end})")))
    import av  # noqa: F401
    import librosa
    import numpy as np

    # librosa loads lazily and JIT-compiles on first use (~3 s once per process): not per-citation
    librosa.resample(np.zeros(4410, np.float32), orig_sr=44100, target_sr=16000, res_type="soxr_hq")
    # the pipeline cuts a batch's segments grouped by video and in time order (StageJudge)
    cits.sort(key=lambda vc: (vc[0], vc[1].modality, vc[1].start, vc[1].end))

    cutter = SegmentCutter(MEDIA)
    t0 = time.perf_counter()
    for video, c in cits:
        cutter.cut(cutter.source(video), c)
    t_mem = time.perf_counter() - t0
    cutter.close()
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        return {"citations": n, "in_memory_s": round(t_mem, 3), "ffmpeg": "not installed"}
    snip = work / "snippets"
    snip.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    for i, (video, c) in enumerate(cits):
        src = str(MEDIA / f"{video}.mp4")
        dur = max(c.end - c.start, 0.1)
        cmd = [ffmpeg, "-y", "-loglevel", "error", "-ss", str(c.start), "-i", src]
        if c.modality == "audio":
            cmd += [
                "-t",
                str(dur),
                "-vn",
                "-acodec",
                "libmp3lame",
                "-q:a",
                "2",
                str(snip / f"{i}.mp3"),
            ]
        elif c.start == c.end:
            cmd += ["-vframes", "1", "-q:v", "2", str(snip / f"{i}.jpg")]
        else:
            cmd += ["-t", str(dur), "-c:v", "libx264", "-an", str(snip / f"{i}.mp4")]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    t_ffmpeg = time.perf_counter() - t0
    return {
        "citations": n,
        "in_memory_s": round(t_mem, 3),
        "ffmpeg_subprocess_s": round(t_ffmpeg, 3),
        "speedup": round(t_ffmpeg / t_mem, 1),
    }


def murgat_score(responses, out, *extra) -> tuple[float, int]:
    """Wall time and peak RSS (KiB, the largest process of the run) of one CLI run."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
    )
    cmd = [
        sys.executable,
        "-c",
        code,
        sys.executable,
        "-m",
        "murgat_local.cli",
        "score",
        str(responses),
        "--media-root",
        str(MEDIA),
        "--out",
        str(out),
        *map(str, extra),
    ]
    wall, rss, rc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.split()
    if int(rc) not in (0, 1):
        raise RuntimeError(f"murgat score failed ({rc})")
    return float(wall), int(rss)


def bench_cache_and_memory(work: pathlib.Path, n_small: int) -> dict:
    judges = [
        "--judge",
        "tiny-qwen3-omni",
        "--verifier",
        "smollm2-135m-instruct",
        "--decomposer",
        "smollm2-135m-instruct",
        "--no-decontextualize",
    ]
    cache = work / "shared.sqlite"
    small = write_jsonl(work / "n.jsonl", make_responses(n_small, distinct=20, seed=5))
    big = write_jsonl(work / "10n.jsonl", make_responses(10 * n_small, distinct=20, seed=5))
    cold, _ = murgat_score(
        small, work / "cold", *judges, "--cache", cache, "--config", work / "small.toml"
    )
    warm, rss_small = murgat_score(
        small, work / "warm", *judges, "--cache", cache, "--config", work / "small.toml"
    )
    warm_big, rss_big = murgat_score(
        big, work / "warm10", *judges, "--cache", cache, "--config", work / "small.toml"
    )
    return {
        "cold_run_s": round(cold, 2),
        "cached_rerun_s": round(warm, 2),
        "rerun_speedup": round(cold / warm, 1),
        "responses_small": n_small,
        "peak_rss_mib_n": round(rss_small / 1024, 1),
        "peak_rss_mib_10n": round(rss_big / 1024, 1),
        "rss_ratio_10n_over_n": round(rss_big / rss_small, 3),
        "rerun_10n_s": round(warm_big, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--responses", type=int, default=60, help="responses for the judge benchmark")
    ap.add_argument("--citations", type=int, default=300)
    ap.add_argument("--memory-n", type=int, default=200)
    ap.add_argument(
        "--only",
        choices=["judges", "segments", "cache", "p_yes"],
        action="append",
        help="p_yes: the judges' run, then only p_yes's cost (best of 5; no one-at-a-time pass)",
    )
    ap.add_argument(
        "--engine-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a vLLM engine argument for the judge benchmark (an int, or text), e.g. block_size=128",
    )
    ap.add_argument(
        "--emulate",
        choices=["avx2"],
        help="hide AVX-512 and AMX from the kernels (scripts/bench_engine.py --help)",
    )
    args = ap.parse_args()
    if args.emulate:
        from murgat_local.engines.cpu import EMULATE_ENV, emulation_env

        if os.environ.get(EMULATE_ENV) != args.emulate:
            env = emulation_env(args.emulate, str(EMULATION), dict(os.environ))
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
    only = set(args.only or ["judges", "segments", "cache"])
    from murgat_local.engines.cpu import cpu_info

    info = cpu_info()
    print(f"machine: {info.line()}", flush=True)
    print(f"date: {time.strftime('%Y-%m-%d')}", flush=True)
    results: dict = {"machine": info.as_dict()}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        (work / "small.toml").write_text("chunk_size = 64\n")
        if "segments" in only:
            results["segments"] = bench_segments(work, args.citations)
            print(json.dumps({"segments": results["segments"]}), flush=True)
        extra = {
            k: (int(v) if v.lstrip("-").isdigit() else v)
            for k, v in (a.split("=", 1) for a in args.engine_arg)
        }
        if "judges" in only:
            results["judges"] = bench_judges(work, args.responses, extra)
            print(json.dumps({"judges": results["judges"]}), flush=True)
        elif "p_yes" in only:
            judged = bench_judges(
                work, args.responses, extra, one_at_a_time=False, p_yes_repeats=5, with_p_yes=True
            )
            results["p_yes"] = judged["p_yes"]
            print(json.dumps({"p_yes": results["p_yes"]}), flush=True)
        if "cache" in only:
            results["cache_and_memory"] = bench_cache_and_memory(work, args.memory_n)
            print(json.dumps({"cache_and_memory": results["cache_and_memory"]}), flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
