"""A run keeps nothing per response but its id: the summary is added up as records are written,
and gives exactly the numbers that averaging every record at the end gave."""

from __future__ import annotations

import json
import random
import tracemalloc
from statistics import mean

from support.fakes import FakeHolder

from murgat_local.config import RunConfig
from murgat_local.engines.base import EngineStats, finish, record
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.metrics.scores import METRICS, summarize
from murgat_local.pipeline import runner as runner_module
from murgat_local.pipeline.runner import Runner
from murgat_local.results import ScoreRecord
from murgat_local.results.records import AnswerCheck


def _old_means(records):
    out = {}
    for m in METRICS:
        values = [r[m] for r in records if r.get(m) is not None]
        out[m] = mean(values) if values else None
    return out


def _summarize_all_at_once(records):
    """The summary as it was computed before: every record kept, then `statistics.mean`."""
    ok = [r for r in records if r.get("status") == "ok"]
    s = {"responses": len(records), "scored": len(ok), "errors": len(records) - len(ok)}
    s.update(_old_means(ok))
    s["undefined"] = sum(1 for r in ok if r.get("murgat_s") is None)
    complete = [r for r in ok if r.get("scored_fraction") in (None, 1.0)]
    s["partial"] = len(ok) - len(complete)
    s["complete_only"] = {"responses": len(complete), **_old_means(complete)}
    # an answer is graded whether or not the response was scored (an erred record may carry it)
    graded = [r["correct"] for r in records if r.get("correct") is not None]
    s["qa_accuracy"] = mean(map(float, graded)) if graded else None
    # an unanswered question is graded wrong and counted apart (metrics.accuracy)
    unanswered = sum(
        1
        for r in records
        if r.get("correct") is not None
        and isinstance(r.get("answer"), dict)
        and r["answer"].get("predicted") is None
    )
    s["unanswered"] = unanswered
    s["unanswered_rate"] = unanswered / len(graded) if graded else None
    s["qa_graded"] = {"multiple-choice": len(graded), "open": 0}  # no record says `question_type`
    s["unparsed_citations"] = 0  # no record has a trace
    return s


def _record(r: dict) -> ScoreRecord:
    """The record unchecked: the values go past what a score may be (up to 1000) on purpose,
    to test the sum's exactness over every magnitude."""
    answer = AnswerCheck(**r["answer"]) if "answer" in r else None
    return ScoreRecord.model_construct(**{**r, "answer": answer})


def test_the_running_summary_is_the_mean_of_all_records_to_the_last_bit():
    rng = random.Random(7)

    def value():
        k = rng.random()
        if k < 0.15:
            return None
        if k < 0.35:
            return rng.choice([0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.1])
        if k < 0.4:
            return rng.choice([0, 1])
        if k < 0.45:
            return rng.random() * 10.0 ** rng.randrange(-300, 3)
        return rng.random()

    for _ in range(500):
        records = [
            {
                "status": rng.choice(["ok", "ok", "ok", "error"]),
                **{m: value() for m in METRICS},
                "scored_fraction": rng.choice([None, 1.0, 0.5, 1]),
                "correct": rng.choice([None, True, False]),
                **rng.choice([{}, {"answer": {"predicted": "A"}}, {"answer": {"predicted": None}}]),
            }
            for _ in range(rng.randrange(0, 30))
        ]
        want = _summarize_all_at_once(records)
        got = summarize(map(_record, records))  # one pass over an iterator
        assert got == want
        assert json.dumps(got) == json.dumps(want)  # the same types and digits in summary.json


class _Yes(FakeHolder):
    """Says every sentence is verifiable; keeps nothing per request."""

    name = kind = "yes"
    identity = "yes:test"

    def __init__(self):
        self.stats = EngineStats()

    def judge(self, requests):
        results = [finish(r, '{"label":"YES"}', 1, 1) for r in requests]
        record(self.stats, results)
        return results


def test_a_run_keeps_nothing_per_response(tmp_path, media_root, monkeypatch):
    # 1,500 responses between the snapshots: what is bounded but not constant (the records
    # file's write buffer, SQLite's statements, larger ints) stays well under the per-response
    # bound, while anything kept per response (~400 B a summary) would be far over it.
    n, early, late = 1700, 100, 1600
    path = tmp_path / "r.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "id": f"r{i}",
                        "video": "colors",
                        "model": ["m1", "m2"][i % 2],
                        "model_generation": f"The screen in take {i} is red.",
                    }
                )
                + "\n"
            )
    cfg = RunConfig(judge="yes", chunk_size=20, decontextualize=False, cache=tmp_path / "c.sqlite")
    runner = Runner(cfg, media_root, tmp_path / "out", engines={"yes": _Yes()}, summary=RunSummary)
    snapshots = {}
    read = runner_module.read_responses

    def watched(responses, *args):
        for i, item in enumerate(read(responses, *args)):
            if i in (early, late):  # both at a chunk's start
                snapshots[i] = tracemalloc.take_snapshot()
            yield item

    monkeypatch.setattr(runner_module, "read_responses", watched)
    tracemalloc.start(1)
    try:
        result = runner.run(path)
    finally:
        tracemalloc.stop()
        runner.close()
    assert result.summary.scored == n and set(result.summary.by_model) == {"m1", "m2"}
    # What the pipeline (runner, protocol, judges, cache, records) and the scoring allocated
    # and still held, 500 responses later. Keeping each response's summary fields was ~400 B.
    ours = [
        tracemalloc.Filter(True, "*/murgat_local/pipeline/*"),
        tracemalloc.Filter(True, "*/murgat_local/metrics/*"),
        tracemalloc.Filter(True, "*/murgat_local/grading.py"),
    ]
    grown = sum(
        d.size_diff
        for d in snapshots[late]
        .filter_traces(ours)
        .compare_to(snapshots[early].filter_traces(ours), "filename")
    )
    assert grown / (late - early) < 20, grown
