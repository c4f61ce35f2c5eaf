"""A run judged by human labels (`human:PATH`), for the human-label tests: the result and its
records by id."""

from __future__ import annotations

import json

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from support.human_labels import LABELS, RESPONSES, _write


def _run(tmp_path, media_root, responses=RESPONSES, labels=LABELS, engines=None, **cfg):
    lab = _write(tmp_path / "labels.jsonl", labels)
    cfg.setdefault("judge", f"human:{lab}")
    runner = Runner(
        RunConfig(**cfg), media_root, tmp_path / "out", engines=engines, summary=RunSummary
    )
    try:
        result = runner.run(_write(tmp_path / "r.jsonl", responses))
    finally:
        runner.close()
    return result, {
        r["id"]: r for r in map(json.loads, result.records_path.read_text().splitlines())
    }
