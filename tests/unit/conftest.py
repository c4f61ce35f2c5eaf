"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest
from support.human_labels import LABELS, RESPONSES, _write
from support.labelled_groups import HAND_GROUPS, LABELLED, R
from typer.testing import CliRunner

from murgat_local.cli import app


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
