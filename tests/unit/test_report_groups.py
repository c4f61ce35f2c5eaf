"""`murgat report --group-by`: the per-group tables hold the numbers `murgat score --group-by`
writes, and compute the same for a field the score run was not given."""

from __future__ import annotations

import json
import re
from statistics import mean

import pytest
from support.labelled_groups import HAND_GROUPS, SCORED_BY_HAND
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.metrics.groups import NO_VALUE

cli = CliRunner()


def test_report_group_by_shows_the_groups_numbers(scored, tmp_path):
    out, _ = scored
    summary = json.loads((out / "summary.json").read_text())
    page = tmp_path / "report.html"
    r = cli.invoke(
        app,
        [
            "report",
            str(out),
            "--out",
            str(page),
            "--group-by",
            "domain",
            "--group-by",
            "question_type",
        ],
    )
    assert r.exit_code == 0, r.output
    text = page.read_text()
    block = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S
    ).group(1)
    rows = json.loads(block)["by_group"]
    domain = {row["group"]: row for row in rows if row["field"] == "domain"}
    assert list(domain) == list(HAND_GROUPS["domain"])
    for value, row in domain.items():  # the numbers `murgat score --group-by domain` wrote
        for m in ("murgat_s", "coverage", "qa_accuracy"):
            assert row[m] == summary["by_group"]["domain"][value][m]
            assert row[f"{m}_ci"] == summary["by_group"]["domain"][value][f"{m}_ci"]
    # a field the score run was not given: computed from scores.jsonl the same way
    kinds = {row["group"]: row for row in rows if row["field"] == "question_type"}
    assert list(kinds) == ["multiple-choice", NO_VALUE]
    assert kinds["multiple-choice"]["murgat_s"] == pytest.approx(SCORED_BY_HAND["h01"])
    assert kinds[NO_VALUE]["murgat_s"] == pytest.approx(
        mean([SCORED_BY_HAND["h02"], SCORED_BY_HAND["h03"]])
    )
    assert text.count('<table class="groups"') == 2 and 'data-group="Sports"' in text
    assert "Results per group" in text
