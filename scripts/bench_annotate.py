"""Latency of `murgat annotate`'s API with a store already holding many answers (issue 20).

A responses file of synthetic responses on the sample's colors.mp4 (4 sentences, 12 questions
each when answered the fixed way below) is made in a temporary folder; the store is filled with
`--answers` answers of one annotator, the rows a session writes for those responses (written in
one transaction: filling it through the server would time the fill, not the API). Then the real
`murgat annotate` is started on it (uvicorn on 127.0.0.1) and, over one keep-alive connection as
a browser holds, `--requests` rounds of GET /api/next then POST /api/answer are timed. Printed:
the server's start-up (reading the source and the store), p50 / p99 / max per endpoint.
Asserts nothing.

Usage:
    python scripts/bench_annotate.py [--answers 100000] [--requests 1000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATION = (
    "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). "
    "The screen turns blue (visual, 0:02; audio, 0:02-0:03). So A is correct.\nAnswer: A"
)
PER_RESPONSE = 12


def answer_for(item, q):
    """The fixed way every question is answered here (12 questions per response)."""
    from murgat_local.annotate.questions import plain

    if q.kind == "verifiable":
        return not item.sentences[q.sentence].text.startswith("So ")
    if q.kind == "facts":
        return [plain(item.sentences[q.sentence].claim)]
    if q.kind == "entailed":
        return True
    return q.citation == 0


def answer_shown(q: dict):
    """`answer_for`, from what /api/next shows."""
    if q["kind"] == "verifiable":
        return not q["response"]["sentences"][q["sentence"]].startswith("So ")
    if q["kind"] == "facts":
        return q["proposal"]
    return True if q["kind"] == "entailed" else q["citation"] == 0


def fill(store_path: pathlib.Path, source, n_answers: int, annotator: str) -> int:
    from murgat_local.annotate.questions import next_question
    from murgat_local.annotate.store import Store

    rows, now = [], time.time()
    for item in source.items:
        answers: dict = {}
        while len(rows) < n_answers and (q := next_question(item, answers)) is not None:
            answers[q.suffix] = answer_for(item, q)
            rows.append(
                (annotator, item.id, item.digest, q.suffix, json.dumps(answers[q.suffix]), 0, now)
            )
        if len(rows) >= n_answers:
            break
    store = Store(store_path)
    with store.db:
        store.db.execute("BEGIN")
        store.db.executemany(
            "INSERT INTO answers (annotator, response, digest, question, value, judge_shown, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    store.close()
    return len(rows)


def percentiles(xs: list[float]) -> str:
    xs = sorted(xs)
    p = lambda f: xs[min(len(xs) - 1, int(round(f * (len(xs) - 1))))] * 1000  # noqa: E731
    return f"p50 {p(0.5):7.2f} ms   p99 {p(0.99):7.2f} ms   max {xs[-1] * 1000:7.2f} ms   mean {statistics.mean(xs) * 1000:6.2f} ms"


def run(tmp: pathlib.Path, n_answers: int, n_requests: int) -> None:
    from murgat_local.annotate.source import load_source

    media = ROOT / ".local" / "sample_media"
    n_responses = n_answers // PER_RESPONSE + n_requests // PER_RESPONSE + 10
    responses = tmp / "responses.jsonl"
    with open(responses, "w") as f:
        for k in range(n_responses):
            f.write(
                json.dumps({"id": f"r{k:06d}", "video": "colors", "model_generation": GENERATION})
                + "\n"
            )
    store = tmp / "annotate.sqlite"
    t0 = time.perf_counter()
    source = load_source(responses, media)
    filled = fill(store, source, n_answers, "bench")
    print(
        f"{n_responses} responses, store filled with {filled} answers in {time.perf_counter() - t0:.1f} s"
    )

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "murgat_local.cli",
            "annotate",
            str(responses),
            "--media-root",
            str(media),
            "--labels",
            str(tmp / "labels.jsonl"),
            "--annotator",
            "bench",
            "--port",
            "0",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    for line in proc.stdout:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if m:
            url = int(m.group(1))
            break
    if url is None:
        raise SystemExit("the server did not start: " + proc.stdout.read())
    started = time.perf_counter() - t0
    conn = http.client.HTTPConnection("127.0.0.1", url, timeout=60)
    nexts, answers = [], []
    try:
        conn.request("GET", "/api/progress")
        progress = json.loads(conn.getresponse().read())
        assert progress["answered"] == filled, progress
        for _ in range(n_requests):
            t = time.perf_counter()
            conn.request("GET", "/api/next")
            nxt = json.loads(conn.getresponse().read())
            nexts.append(time.perf_counter() - t)
            if nxt["done"]:
                break
            q = nxt["question"]
            body = json.dumps({"key": q["key"], "answer": answer_shown(q)})
            t = time.perf_counter()
            conn.request(
                "POST", "/api/answer", body=body, headers={"Content-Type": "application/json"}
            )
            reply = json.loads(conn.getresponse().read())
            answers.append(time.perf_counter() - t)
            assert reply.get("ok"), reply
    finally:
        conn.close()
        proc.terminate()
        proc.wait(60)
    print(f"server start-up (process start to URL printed, source and store read): {started:.2f} s")
    print(f"GET  /api/next    {len(nexts):5d} requests   {percentiles(nexts)}")
    print(f"POST /api/answer  {len(answers):5d} requests   {percentiles(answers)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--answers", type=int, default=100_000, help="answers in the store before timing"
    )
    ap.add_argument("--requests", type=int, default=1000, help="next + answer rounds timed")
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    with tempfile.TemporaryDirectory(prefix="bench-annotate-") as tmp:
        run(pathlib.Path(tmp), args.answers, args.requests)


if __name__ == "__main__":
    main()
