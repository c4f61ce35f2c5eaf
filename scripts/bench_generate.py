"""Benchmark: responses per second and output tokens per second for a whole dataset, generated
in stage-wise batches vs one request at a time, with the same model, side by side in one run.

Both passes go through the real `murgat generate` pipeline (media cut from the sample videos,
the same prompts), each with a fresh cache; only `batch_size` differs. Prints the figures and
their ratios; asserts nothing.

Usage: python scripts/bench_generate.py [--items 100] [--model tiny-qwen3-omni] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import tempfile
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

from murgat_local import offline  # noqa: E402

offline.enforce()

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLORS = ["red", "green", "blue", "yellow", "cyan", "magenta", "white", "black"]


def dataset(path: pathlib.Path, n: int) -> None:
    videos = ["colors", "speech", "late_audio", "silent"]
    with path.open("w") as fh:
        for i in range(n):
            second = i % 8
            fh.write(json.dumps({
                "id": f"b{i}", "video": videos[i % len(videos)],
                "question": f"What colour fills the screen at second {second} (question {i})?",
                "options": [COLORS[(second + k) % 8] for k in range(4)], "answer": "A",
            }) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--model", default="tiny-qwen3-omni")
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    from murgat_local.config import GenerateConfig
    from murgat_local.engines import LazyEngine, load_preset
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
            cfg = GenerateConfig(models=[args.model], strategies=["cite"], batch_size=batch,
                                 sampling={"max_tokens": args.max_tokens}, answer_judge=None,
                                 max_failed_calls=1.0)
            runner = GenerateRunner(cfg, media, tmp / f"{name}.jsonl".replace(" ", "_"), engines=engines)
            before = engine.stats.output_tokens if engine.started else 0
            t0 = time.perf_counter()
            result = runner.run(warm if name == "warm-up" else data)
            wall = time.perf_counter() - t0
            runner.close(engines=False)
            if name == "warm-up":
                continue
            calls = result.summary["calls"][f"generate:{args.model}"]
            tokens = engine.stats.output_tokens - before
            results[name] = {"responses": calls["model_calls"], "wall_s": round(wall, 2),
                             "responses_per_s": round(calls["model_calls"] / wall, 3),
                             "output_tokens": tokens, "output_tokens_per_s": round(tokens / wall, 1)}
    engine.close()
    one, batched = results["one at a time"], results["batched"]
    print(json.dumps({
        "model": args.model, "items": args.items, "max_tokens": args.max_tokens, **results,
        "speedup_responses": round(batched["responses_per_s"] / one["responses_per_s"], 2),
        "speedup_tokens": round(batched["output_tokens_per_s"] / one["output_tokens_per_s"], 2),
    }, indent=2))


if __name__ == "__main__":
    main()
