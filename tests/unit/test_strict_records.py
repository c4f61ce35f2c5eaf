"""Strict, bounded records: a value of the wrong JSON type or out of its bounds is that line's
error, named with its file and line, and left out of every number; a line the schema accepts
never makes a command print a traceback."""

from __future__ import annotations

import json
import pathlib

import pytest
from support.paths import ROOT
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.results import SCHEMAS, ReadError, ScoreRecord, layout, read_score_records
from murgat_local.results.versions import validate

SCORE = ROOT / "tests" / "support" / "data" / "results_v0" / "score"


def _lines() -> list[dict]:
    return [json.loads(line) for line in (SCORE / layout.SCORES).read_text().splitlines()]


def _run_with(tmp_path: pathlib.Path, *extra: dict) -> pathlib.Path:
    """The sample run's scores.jsonl with `extra` lines after it, in a folder of its own."""
    folder = tmp_path / "b"
    folder.mkdir()
    lines = [json.dumps(r) for r in (*_lines(), *extra)]
    (folder / layout.SCORES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _invoke(*args: str):
    got = CliRunner().invoke(app, list(args))
    # a command ends by its exit status, never by an exception the user sees as a traceback
    assert got.exception is None or isinstance(got.exception, SystemExit), got.output
    assert "Traceback" not in got.output
    return got, " ".join(got.output.split())


def test_a_number_written_as_text_and_yes_for_true_are_that_lines_error(tmp_path):
    first = _lines()[0]
    coerced = {**first, "id": "coerced", "murgat_s": "1e3", "correct": "yes"}
    folder = _run_with(tmp_path, coerced)
    got, text = _invoke("compare", str(SCORE), str(folder), "--resamples", "10")
    line = len(_lines()) + 1
    assert got.exit_code == 1
    assert f"{folder / layout.SCORES} line {line}: " in text
    assert "murgat_s: Input should be a valid" in text and "correct: Input should be" in text
    assert "333.567" not in text and "1000" not in text
    # the mean of B is the mean over the lines that were read: the sample's own
    report = tmp_path / "report.json"
    _invoke("compare", str(SCORE), str(folder), "--resamples", "10", "--out", str(report))
    metrics = json.loads(report.read_text())["metrics"]
    assert metrics["murgat_s"]["mean_b"] == metrics["murgat_s"]["mean_a"]


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("murgat_s", 1.5, "less than or equal to 1"),
        ("coverage", -0.1, "greater than or equal to 0"),
        ("f1", float("nan"), "finite number"),
        ("counts", {"facts": -1}, "greater than or equal to 0"),
        ("index", True, "valid integer"),
        ("status", "fine", "'ok' or 'error'"),
    ],
)
def test_values_outside_their_bounds_are_refused(field, value, why):
    reason = validate(ScoreRecord, {**_lines()[0], field: value}, "score record")
    assert isinstance(reason, str) and field in reason and why in reason, reason


def test_rescore_names_an_ok_line_without_a_trace_instead_of_a_traceback(tmp_path):
    folder = _run_with(tmp_path, {"schema_version": 1, "status": "ok", "f1": 0.5})
    got, text = _invoke("rescore", str(folder / layout.SCORES), "--resamples", "0")
    assert got.exit_code == 1
    line = len(_lines()) + 1
    assert f"{folder / layout.SCORES} line {line}: " in text
    assert "no trace" in text
    assert "MURGAT scores (rescored)" in text  # the other lines are rescored


def test_a_citation_index_that_is_not_a_number_is_refused(tmp_path):
    record = _lines()[0]
    fact = record["trace"]["sentences"][0]["facts"][0]
    fact["alone"] = {"zero": {"value": True}}
    folder = _run_with(tmp_path, record)
    (bad,) = [r for r in read_score_records(folder / layout.SCORES) if isinstance(r, ReadError)]
    assert "alone.zero" in bad.reason
    got, text = _invoke("rescore", str(folder / layout.SCORES), "--resamples", "0")
    assert got.exit_code == 1 and f"line {len(_lines()) + 1}: " in text


def _fields(schema: dict):
    """(where, property schema) of every property of a JSON Schema and of its definitions."""
    for name, sub in [("", schema), *schema.get("$defs", {}).items()]:
        for prop, spec in sub.get("properties", {}).items():
            yield f"{name or schema['title']}.{prop}", spec


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_every_field_of_every_schema_is_described(name):
    got = CliRunner().invoke(app, ["schema", name])
    schema = json.loads(got.stdout)
    missing = [where for where, spec in _fields(schema) if not spec.get("description")]
    assert missing == []


def test_murgat_schema_lists_every_output_file():
    got = CliRunner().invoke(app, ["schema"])
    listed = got.stdout
    for name in ("generation_summary.json", "meta_eval.json", "run_summary.json", "summary.json"):
        assert name in listed
    assert list(SCHEMAS) == [
        "score-record",
        "generation-record",
        "summary",
        "generation-summary",
        "run-summary",
        "meta-eval",
        "comparison",
    ]


def test_a_record_out_of_its_bounds_is_written_as_that_responses_error(monkeypatch):
    """The writer holds to the schema too: a value out of bounds (never expected) becomes the
    response's error, naming the field, instead of stopping the run."""
    from murgat_local.inputs.responses import InputError
    from murgat_local.pipeline import records

    def out_of_bounds(state, mode, tolerance):
        return {"index": 3, "id": "r3", "status": "ok", "source": "line 4", "murgat_s": 2.5}

    monkeypatch.setattr(records, "_record", out_of_bounds)
    got = records.build_record(InputError(3, "r3", "line 4", "unused"), "default")
    assert got.status == "error" and got.id == "r3" and got.source == "line 4"
    assert "its record could not be written" in (got.error or "") and "murgat_s" in got.error
