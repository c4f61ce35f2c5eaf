"""Scoring runs over one cache, for the cache fault tests."""

from __future__ import annotations

import json

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from support.fakes import OracleEngine

TEXT = "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). Therefore A.\nAnswer: A"


def _responses(tmp_path, n=4):
    p = tmp_path / "r.jsonl"
    p.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"r{i}",
                    "video": "colors",
                    "model_generation": TEXT.replace("0:00)", f"0:0{i % 8})"),
                }
            )
            for i in range(n)
        )
        + "\n"
    )
    return p


def _run(tmp_path, media_root, responses, out, cache=None, engine=None):
    cfg = RunConfig(judge="oracle", cache=cache, decontextualize=False)
    runner = Runner(
        cfg, media_root, out, engines={"oracle": engine or OracleEngine()}, summary=RunSummary
    )
    try:
        return runner.run(responses)
    finally:
        runner.close()


def _records(result):
    return result.records_path.read_bytes()
