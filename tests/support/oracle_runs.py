"""A `murgat score` run on rows, judged by the oracle."""

from __future__ import annotations

import json

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from support.fakes import OracleEngine


def _rows(tmp_path, rows):
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def _run(tmp_path, media_root, rows, engine=None, **cfg):
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False, **cfg),
        media_root,
        tmp_path / "out",
        engines={"oracle": engine or OracleEngine()},
        summary=RunSummary,
    )
    try:
        result = runner.run(_rows(tmp_path, rows))
    finally:
        runner.close()
    return result, [json.loads(l) for l in result.records_path.read_text().splitlines()]
