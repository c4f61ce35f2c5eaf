"""`--dry-run --calibrate N`: the hours a whole set needs, from N responses judged for real."""

from __future__ import annotations

import json
import time

import pytest
from support.fakes import OracleEngine

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.dryrun import extrapolate
from murgat_local.pipeline.runner import Runner

GOOD = "The screen is red (visual, 0:00). The screen is green and a tone plays (visual, 0:01; audio, 0:01). So A.\nAnswer: A"


def test_extrapolation_by_hand():
    counts = {
        "complete": False,
        "verifiable": {"calls": 300, "cached": 100},
        "decompose": {"calls": 40, "cached": 40},
        "entail": {"calls": 0, "cached": 0},
    }
    cal = {
        "verifiable": {"calls": 30, "seconds_per_call": 0.5},
        "decompose": {"calls": 20, "seconds_per_call": 2.0},
        "entail": {"calls": 50, "seconds_per_call": 3.6},
    }
    est = extrapolate(counts, cal, responses=100, sampled=10)
    v, d, e = (est["stages"][s] for s in ("verifiable", "decompose", "entail"))
    assert (v["calls"], v["exact"], v["to_run"]) == (300, True, 200)  # known exactly from the plan
    assert (d["calls"], d["exact"], d["to_run"]) == (200, False, 160)  # 2 per response, 40 cached
    assert (e["calls"], e["to_run"]) == (500, 500)
    assert v["hours"] == pytest.approx(200 * 0.5 / 3600, abs=1e-4)
    assert est["hours"] == pytest.approx((200 * 0.5 + 160 * 2.0 + 500 * 3.6) / 3600, abs=1e-3)


def test_untimed_stage_leaves_the_total_unknown_with_a_note():
    counts = {"complete": True, "entail": {"calls": 10, "cached": 0}}
    est = extrapolate(
        counts, {"entail": {"calls": 2, "seconds_per_call": None}}, responses=5, sampled=1
    )
    assert est["hours"] is None and "entail" in est["note"]


class SlowOracle(OracleEngine):
    """The oracle at a known pace: 20 ms per request."""

    def judge(self, requests):
        time.sleep(0.02 * len(requests))
        return super().judge(requests)


def test_calibration_on_a_real_run(tmp_path, media_root):
    rows = tmp_path / "r.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "video": "colors", "model_generation": GOOD}) + "\n"
            for i in range(12)
        )
    )
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        media_root,
        tmp_path / "out",
        engines={"oracle": SlowOracle()},
        summary=RunSummary,
    )
    try:
        plan = runner.plan(rows)
        est = runner.estimate(rows, plan, 3)
    finally:
        runner.close()
    assert est["responses"] == 12 and est["calibrated_on"] == 3
    # a stage's time per model call: the engine's pace, plus what the stage does around it (the
    # entailment stage cuts its media, a real cost of the whole set too)
    for stage in ("verifiable", "decompose", "entail"):
        s = est["stages"][stage]
        assert 0.02 <= s["seconds_per_call"] < 2.0, stage
    assert est["stages"]["verifiable"]["exact"] is True
    assert est["hours"] is not None and est["hours"] > 0
