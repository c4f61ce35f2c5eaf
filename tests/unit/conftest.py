"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest
from support.human_labels import LABELS, RESPONSES, _write
from support.labelled_groups import HAND_GROUPS, LABELLED, R
from support.select_runs import MISTAKES, _with_mistakes
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


@pytest.fixture(scope="module")
def scored(tmp_path_factory, media_root):
    """`murgat score --group-by` on the labelled responses, human labels as the judge."""
    tmp = tmp_path_factory.mktemp("groups")
    lab = _write(tmp / "labels.jsonl", LABELS)
    resp = _write(tmp / "r.jsonl", [{**r, **LABELLED[r["id"]]} for r in RESPONSES])
    cfg = tmp / "run.toml"
    cfg.write_text(f"bootstrap_resamples = {R}\n")
    out = tmp / "out"
    args = [
        "score",
        str(resp),
        "--media-root",
        str(media_root),
        "--out",
        str(out),
        "--judge",
        f"human:{lab}",
        "--config",
        str(cfg),
    ]
    for f in HAND_GROUPS:
        args += ["--group-by", f]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    return out, r.output


@pytest.fixture(scope="session")
def select_runs(tmp_path_factory, media_root):
    """Runs scored by three human-label judges with known mistakes and one perfect copy, for the
    `meta-eval --select` tests (test_select_judges.py, test_select_hostile.py)."""
    tmp = tmp_path_factory.mktemp("select")
    truth = _write(tmp / "truth.jsonl", LABELS)
    responses = _write(tmp / "r.jsonl", RESPONSES)
    judges = {
        name: f"human:{_write(tmp / f'{name}.jsonl', _with_mistakes(*m))}"
        for name, m in MISTAKES.items()
    }
    judges["perfect"] = (
        f"human:{_write(tmp / 'perfect.jsonl', [dict(l, annotator='copy') for l in LABELS])}"
    )
    for name, model in judges.items():
        runner = Runner(
            RunConfig(judge=model, bootstrap_resamples=0),
            media_root,
            tmp / name,
            summary=RunSummary,
        )
        try:
            assert runner.run(responses).exit_code == 0
        finally:
            runner.close()
    return tmp, truth, responses, judges
