"""Benchmark: 100,000 responses stream through `murgat score` in flat memory.

N responses (a few cited sentences each over the sample videos: the text differs per response,
the cited segments repeat, the ids are unique) are scored by the real `Runner`, with a real
SQLite verdict cache in a temporary folder and a *replayed* engine: every judge request is
answered at once with a valid verdict of the requested type (decided by the request's text,
so the same request always gets the same verdict), as a recorded run would answer. What is
measured is the pipeline itself: reading, protocol, segment cutting, cache, records, summary.

Each N runs in a fresh subprocess, so the peaks are separate: peak RSS (getrusage, and the
highest VmRSS sampled every 0.1 s) at N = 10,000 and N = 100,000, responses per second, and the
ratio of the peaks (target: about 1, memory flat). Prints figures; asserts nothing.

`--tracemalloc` instead runs one N in-process and prints what grew between 30% and 90% of the
responses read (tracemalloc snapshots), to find what a run keeps per response.

Usage: python scripts/bench_stream.py [--sizes 10000 100000] [--chunk-size 512] [--sentences 3]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
MEDIA = ROOT / ".local" / "sample_media"

COLORS = ["red", "green", "blue", "yellow", "cyan", "magenta", "white", "black"]
SUBJECTS = ["screen", "background", "frame", "picture", "panel", "display", "scene", "image"]
SOUNDS = ["a tone", "a steady tone", "a high tone", "a low tone", "a beep", "a sound"]
PEOPLE = ["the host", "the narrator", "a voice", "someone"]


def _clock(s: float) -> str:
    return f"0:{s:04.1f}" if s != int(s) else f"0:{int(s):02d}"


def make_response(i: int, sentences: int) -> dict:
    """Response `i`: its words are its own (the index is in each sentence), its citations are
    drawn from a few dozen segments of the sample videos, so segments repeat across responses."""
    r = random.Random(i)
    video = r.choice(["colors", "colors", "late_audio", "speech"])
    last = 3 if video == "speech" else 7  # the last whole second a citation may start at
    parts = []
    for j in range(sentences):
        kind = r.randrange(4)
        sec = r.randrange(0, last)
        if kind == 0:
            cite = f"(visual, {_clock(sec)})"
            text = f"In take {i}, the {r.choice(SUBJECTS)} turns {r.choice(COLORS)}"
        elif kind == 1:
            cite = f"(visual, {_clock(sec)}-{_clock(sec + 1)})"
            text = f"Shot {i}.{j} shows a {r.choice(COLORS)} {r.choice(SUBJECTS)} and then a {r.choice(COLORS)} one"
        elif kind == 2:
            cite = f"(visual, {_clock(sec)}; audio, {_clock(sec)}-{_clock(sec + 1)})"
            text = f"The {r.choice(SUBJECTS)} is {r.choice(COLORS)} while {r.choice(SOUNDS)} plays, as in clip {i}"
        else:
            cite = f"(audio, {_clock(sec)}-{_clock(sec + 1)})"
            text = f"In part {j} of answer {i}, {r.choice(PEOPLE)} says the ball rolls"
        parts.append(f"{text} {cite}.")
    parts.append(f"Therefore the answer is {'ABCD'[i % 4]}.")
    return {
        "id": f"resp-{i:07d}",
        "video": video,
        "question": f"What happens in clip {i}?",
        "options": ["A. red", "B. green", "C. blue", "D. yellow"],
        "answer": "ABCD"[(i // 4) % 4],
        "model_generation": " ".join(parts) + f"\nAnswer: {'ABCD'[i % 4]}",
    }


def write_responses(path: pathlib.Path, n: int, sentences: int) -> pathlib.Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps(make_response(i, sentences)) + "\n")
    return path


# ------------------------------------------------------------------ the replayed engine


_QUOTED = re.compile(r"<<<([A-Z]+)\n(.*?)\n\1>>>", re.S)
_UNSAFE = re.compile(r'["\\\x00-\x1f\x7f-\x9f]')


def _j(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class ReplayedEngine:
    """Answers every request at once with a valid verdict of the requested type, through the
    same contract check (`finish`) a model's output goes through. Keeps nothing per request.
    Its own holder: it states what `engines.holder.EngineHolder` asks."""

    identity_detail = None
    neutralization = None
    preset = None
    unavailable: dict = {}
    per_item = False
    needs_media = True
    media_by_reference = False

    def __init__(self, name: str = "replay"):
        from murgat_local.engines.base import EngineStats

        self.name = self.kind = name
        self.modalities = frozenset({"text", "image", "video", "audio"})
        self.stats = EngineStats()
        self.identity = f"replay:{name}:v1"
        self.started = True

    def get(self):
        return self

    def close(self) -> None:
        pass

    def check_response(self, item_id, sentences, *, member=False):
        return None

    @staticmethod
    def _quoted(prompt: str) -> str:
        m = _QUOTED.findall(prompt)
        text = m[-1][1] if m else prompt.strip().splitlines()[-1]
        return _UNSAFE.sub(" ", text).strip() or "x"

    def _answer(self, req) -> str:
        kind = req.verdict.__name__ if req.verdict is not None else None
        text = self._quoted(req.prompt)
        if kind == "Rewrite":
            return _j({"sentence": text[:300]})
        if kind == "RewrittenText":
            return _j({"text": text[:2000]})
        if kind == "AtomicFacts":
            bare = re.sub(r"\s*\([^)]*\)", "", text).rstrip(". ")
            facts = [
                f.strip()[:119] + "." for f in re.split(r"\band\b|\bwhile\b|,", bare) if f.strip()
            ]
            return _j({"facts": facts[:6] or [bare[:119] or "x"]})
        if kind in ("YesNo", "ReasonedYesNo"):
            if text.lower().startswith("therefore"):
                label = "NO"
            else:  # about two in three entailed, fixed by the request
                label = "NO" if zlib.crc32(req.prompt.encode()) % 3 == 0 else "YES"
            if kind == "ReasonedYesNo":
                return _j({"reason": "replayed", "label": label})
            return _j({"label": label})
        if req.choices:
            return req.choices[0]
        return "A"

    def judge(self, requests):
        from murgat_local.engines.base import Timer, finish, record

        with Timer(self.stats):
            results = [finish(r, self._answer(r), len(r.prompt) // 4, 8) for r in requests]
        record(self.stats, results)
        return results


# ------------------------------------------------------------------ one run, in this process


class RssSampler(threading.Thread):
    def __init__(self, every: float = 0.1):
        super().__init__(daemon=True)
        self.every = every
        self.peak_kib = 0
        self.stop = threading.Event()

    @staticmethod
    def rss_kib() -> int:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak_kib = max(self.peak_kib, self.rss_kib())
            self.stop.wait(self.every)


def run_one(
    responses: pathlib.Path, work: pathlib.Path, chunk_size: int, snapshots: bool = False
) -> dict:
    from murgat_local.config import RunConfig
    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline import runner as runner_module
    from murgat_local.pipeline.runner import Runner

    n = sum(1 for _ in responses.open("rb"))
    cfg = RunConfig(judge="replay", chunk_size=chunk_size, cache=work / "verdicts.sqlite")
    engine = ReplayedEngine()
    runner = Runner(cfg, MEDIA, work / "out", engines={"replay": engine}, summary=RunSummary)
    if snapshots:
        import tracemalloc

        tracemalloc.start(1)
        marks = {int(n * 0.3): "30%", int(n * 0.9): "90%"}
        taken: dict = {}
        read = runner_module.read_responses

        def watched(path, limit=None):
            for i, item in enumerate(read(path, limit)):
                if i in marks:
                    taken[marks[i]] = tracemalloc.take_snapshot()
                yield item

        runner_module.read_responses = watched
    start_rss = RssSampler.rss_kib()
    sampler = RssSampler()
    sampler.start()
    t0 = time.perf_counter()
    result = runner.run(responses)
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    runner.close()
    out = {
        "responses": n,
        "scored": result.summary["scored"],
        "errors": result.summary["errors"],
        "wall_s": round(wall, 1),
        "responses_per_s": round(n / wall, 1),
        "judge_calls": sum(s["calls"] for s in result.summary["stages"].values()),
        "unique_calls": result.summary["judge_calls"]["total"],
        "segments_decoded": result.summary["segments_decoded"],
        "rss_before_run_mib": round(start_rss / 1024, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_vmrss_sampled_mib": round(sampler.peak_kib / 1024, 1),
        "cache_mib": round((work / "verdicts.sqlite").stat().st_size / 2**20, 1),
    }
    if snapshots:
        tracemalloc.stop()
        diff = taken["90%"].compare_to(taken["30%"], "traceback")
        grown = int(n * 0.6)
        out["growth_between_30_and_90_percent"] = [
            {
                "kib": round(d.size_diff / 1024, 1),
                "blocks": d.count_diff,
                "bytes_per_response": round(d.size_diff / grown, 1),
                "where": [
                    f"{f.filename.replace(str(ROOT) + '/', '')}:{f.lineno}" for f in d.traceback
                ][-4:],
            }
            for d in diff[:8]
        ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--chunk-size", type=int, default=512, help="the default chunk_size")
    ap.add_argument(
        "--sentences", type=int, default=3, help="cited sentences per response (+1 conclusion)"
    )
    ap.add_argument(
        "--tracemalloc",
        action="store_true",
        help="one in-process run of the first size, with snapshots",
    )
    ap.add_argument(
        "--one", type=pathlib.Path, help=argparse.SUPPRESS
    )  # a child: run this responses file
    ap.add_argument("--work", type=pathlib.Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.work, args.chunk_size)))
        return
    with tempfile.TemporaryDirectory(prefix="bench_stream_") as tmp:
        work = pathlib.Path(tmp)
        if args.tracemalloc:
            responses = write_responses(work / "r.jsonl", args.sizes[0], args.sentences)
            print(json.dumps(run_one(responses, work, args.chunk_size, snapshots=True), indent=2))
            return
        results = {}
        for n in args.sizes:
            responses = write_responses(work / f"r{n}.jsonl", n, args.sentences)
            run_dir = work / f"run{n}"
            run_dir.mkdir()
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    str(responses),
                    "--work",
                    str(run_dir),
                    "--chunk-size",
                    str(args.chunk_size),
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if proc.returncode != 0:
                raise SystemExit(f"the run of {n} responses failed:\n{proc.stderr[-4000:]}")
            results[n] = json.loads(proc.stdout.strip().splitlines()[-1])
            results[n]["input_mib"] = round(responses.stat().st_size / 2**20, 1)
            print(json.dumps({n: results[n]}), flush=True)
            responses.unlink()
            (run_dir / "verdicts.sqlite").unlink()
        small, big = min(args.sizes), max(args.sizes)
        if small != big:
            print(
                json.dumps(
                    {
                        "sizes": [small, big],
                        "chunk_size": args.chunk_size,
                        "sentences": args.sentences,
                        "peak_rss_mib": [
                            results[small]["peak_rss_mib"],
                            results[big]["peak_rss_mib"],
                        ],
                        "rss_ratio": round(
                            results[big]["peak_rss_mib"] / results[small]["peak_rss_mib"], 3
                        ),
                        "responses_per_s": [
                            results[small]["responses_per_s"],
                            results[big]["responses_per_s"],
                        ],
                    },
                    indent=2,
                )
            )


if __name__ == "__main__":
    main()
