"""The typed results: a real run's files (written before `schema_version`, so version 0) read,
written back unchanged, and a newer version or an unknown field refused with a message."""

from __future__ import annotations

import json
import pathlib

import pytest
from support.paths import ROOT
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.results import (
    CURRENT,
    SCHEMAS,
    GenerationRecord,
    ReadError,
    RunSummary,
    ScoreRecord,
    Summary,
    layout,
    read_generation_records,
    read_objects,
    read_run_summary,
    read_score_records,
    read_summary,
)

# `scripts/run_sample.sh`'s score folder and an e2e `murgat run` folder, as they were written.
V0 = ROOT / "tests" / "support" / "data" / "results_v0"
SCORE, RUN = V0 / "score", V0 / "run"
CELL = RUN / "tiny-qwen3-omni__base"


def _lines(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _written(obj) -> dict:
    """What the writer writes, as the old file had it: the same keys, plus `schema_version`."""
    data = json.loads(json.dumps(obj.dump(), sort_keys=True))
    assert data.pop("schema_version") == CURRENT
    return data


@pytest.mark.parametrize(
    ("path", "read"),
    [
        (SCORE / layout.SCORES, read_score_records),
        (CELL / layout.SCORES, read_score_records),
        (CELL / layout.RESPONSES, read_generation_records),
    ],
)
def test_version_0_records_read_and_write_back_unchanged(path, read):
    originals = _lines(path)
    records = list(read(path))
    assert [type(r) for r in records] != [] and not any(isinstance(r, ReadError) for r in records)
    assert [_written(r) for r in records] == originals
    # ... and the file the writer writes now reads back to the same records
    again = path.parent / "again.jsonl"
    try:
        again.write_text("".join(json.dumps(r.dump()) + "\n" for r in records), encoding="utf-8")
        assert [_written(r) for r in read(again)] == originals
    finally:
        again.unlink()


@pytest.mark.parametrize(
    ("path", "read"),
    [
        (SCORE / layout.SUMMARY, read_summary),
        (CELL / layout.SUMMARY, read_summary),
        (RUN / layout.RUN_SUMMARY, read_run_summary),
    ],
)
def test_version_0_summaries_read_and_write_back_unchanged(path, read):
    got = read(path)
    assert not isinstance(got, ReadError), got
    assert _written(got) == json.loads(path.read_text(encoding="utf-8"))


def test_records_are_typed_down_to_their_verdicts():
    first = next(iter(read_score_records(SCORE / layout.SCORES)))
    assert isinstance(first, ScoreRecord)
    assert first.trace is not None and first.trace.sentences
    sentence = first.trace.sentences[0]
    assert sentence.verifiable is not None and sentence.verifiable.yes is True
    assert sentence.citations and sentence.citations[0].modality == "visual"
    assert sentence.facts and sentence.facts[0].joint is not None
    assert isinstance(sentence.facts[0].joint.p_yes, float)
    summary = read_summary(SCORE / layout.SUMMARY)
    assert isinstance(summary, Summary) and summary.models and summary.responses == 6


def _one_line(tmp_path: pathlib.Path, record: dict) -> pathlib.Path:
    path = tmp_path / layout.SCORES
    line = json.dumps(record)
    path.write_text(f"{json.dumps(_lines(SCORE / layout.SCORES)[0])}\n\n{line}\n", "utf-8")
    return path


def test_a_newer_schema_version_is_refused_naming_it_and_the_line(tmp_path):
    record = {**_lines(SCORE / layout.SCORES)[1], "schema_version": CURRENT + 1}
    path = _one_line(tmp_path, record)
    ok, bad = list(read_score_records(path))
    assert isinstance(ok, ScoreRecord)  # the rest of the file still reads
    assert isinstance(bad, ReadError) and bad.line == 3 and bad.path == path
    assert f"schema_version {CURRENT + 1} is newer than this murgat reads" in str(bad)
    assert str(bad).startswith(f"{path} line 3: ")
    # the readers that check values themselves refuse it the same way
    assert isinstance(list(read_objects(path))[1], ReadError)


def test_an_unknown_field_is_refused_naming_it(tmp_path):
    record = _lines(SCORE / layout.SCORES)[1]
    record["trace"]["sentences"][0]["from_the_future"] = 1
    bad = list(read_score_records(_one_line(tmp_path, record)))[1]
    assert isinstance(bad, ReadError) and bad.line == 3
    assert "not a schema_version 0 score record" in bad.reason
    assert "trace.sentences.0.from_the_future: unknown field" in bad.reason
    record = {**_lines(SCORE / layout.SCORES)[1], "schema_version": 1, "extra": True}
    bad = list(read_score_records(_one_line(tmp_path, record)))[1]
    assert isinstance(bad, ReadError) and "schema_version 1 score record: extra" in bad.reason


def test_a_summary_of_a_newer_version_is_refused(tmp_path):
    path = tmp_path / layout.SUMMARY
    path.write_text(json.dumps({"responses": 1, "schema_version": 7}), encoding="utf-8")
    got = read_summary(path)
    assert isinstance(got, ReadError) and "schema_version 7 is newer" in str(got)
    path.write_text("[]", encoding="utf-8")
    assert "not a JSON object" in str(read_summary(path))


def test_lines_that_are_not_records_are_errors_and_the_rest_reads(tmp_path):
    path = tmp_path / layout.SCORES
    good = json.dumps(_lines(SCORE / layout.SCORES)[0])
    path.write_text(f'{good}\n{{"cut\n[1]\n{"[" * 100_000}\n{good}\n', encoding="utf-8")
    got = list(read_score_records(path))
    assert [type(r).__name__ for r in got] == [
        "ScoreRecord",
        "ReadError",
        "ReadError",
        "ReadError",
        "ScoreRecord",
    ]
    assert [r.line for r in got if isinstance(r, ReadError)] == [2, 3, 4]
    assert "not JSON" in got[1].reason and "a JSON list" in got[2].reason
    missing = list(read_score_records(tmp_path / "nowhere.jsonl"))
    assert len(missing) == 1 and isinstance(missing[0], ReadError) and missing[0].line is None


def test_a_generation_record_keeps_the_dataset_rows_own_fields():
    row = {**_lines(CELL / layout.RESPONSES)[0], "difficulty": "hard"}
    record = GenerationRecord.model_validate(row)
    assert record.dump()["difficulty"] == "hard"


def test_cell_folders_are_built_and_parsed_by_one_pair():
    assert layout.cell_folder("tiny-qwen3-omni", "base") == CELL.name
    assert layout.parse_cell_folder(CELL.name) == ("tiny-qwen3-omni", "base")
    assert layout.cell_folder("org/model:q4", "cite") == "org_model-q4__cite"
    assert layout.parse_cell_folder("plain") is None
    assert layout.cell_label("m", "s") == "m/s"


def test_murgat_schema_lists_and_prints_each_schema():
    runner = CliRunner()
    listed = runner.invoke(app, ["schema"])
    assert listed.exit_code == 0
    names = [line.split("\t")[0] for line in listed.stdout.splitlines()[: len(SCHEMAS)]]
    assert names == list(SCHEMAS)
    for name, model in SCHEMAS.items():
        got = runner.invoke(app, ["schema", name])
        assert got.exit_code == 0, got.output
        schema = json.loads(got.stdout)
        assert schema == model.model_json_schema()
        assert "schema_version" in schema["properties"]
    assert json.loads(runner.invoke(app, ["schema", "run-summary"]).stdout)["title"] == (
        RunSummary.__name__
    )
    unknown = runner.invoke(app, ["schema", "scores"])
    assert unknown.exit_code == 2
    assert ", ".join(SCHEMAS) in " ".join(unknown.output.split())


def test_the_fixture_validates_against_the_printed_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for path, name in (
        (SCORE / layout.SCORES, "score-record"),
        (CELL / layout.RESPONSES, "generation-record"),
    ):
        for line in _lines(path):
            jsonschema.validate(
                {**line, "schema_version": CURRENT}, SCHEMAS[name].model_json_schema()
            )
    jsonschema.validate(
        json.loads((SCORE / layout.SUMMARY).read_text()), SCHEMAS["summary"].model_json_schema()
    )


def _with_bad_lines(tmp_path: pathlib.Path) -> pathlib.Path:
    """The sample run's records with a cut line and a record of a newer version among them."""
    lines = (SCORE / layout.SCORES).read_text(encoding="utf-8").splitlines()
    newer = json.dumps({**json.loads(lines[1]), "schema_version": CURRENT + 1})
    path = tmp_path / "run" / layout.SCORES
    path.parent.mkdir()
    path.write_text("\n".join([lines[0], '{"id": "cut', newer, *lines[2:]]) + "\n", "utf-8")
    return path


def test_rescore_and_compare_read_past_bad_lines_name_them_and_exit_1(tmp_path):
    """One rule for a line that is not a record: printed with its file and line, the numbers
    over the rest, exit 1 (the numbers leave lines out)."""
    path = _with_bad_lines(tmp_path)
    runner = CliRunner()
    for args in (
        ["rescore", str(path), "--resamples", "0"],
        ["compare", str(SCORE), str(path.parent), "--resamples", "10"],
    ):
        got = runner.invoke(app, args)
        text = " ".join(got.output.split())
        assert got.exit_code == 1, got.output
        assert f"{path} line 2: not JSON" in " ".join(text.split())
        assert f"line 3: schema_version {CURRENT + 1} is newer" in text
        assert "2 record line(s) could not be read" in text
    rescored = runner.invoke(app, ["rescore", str(path), "--resamples", "0"])
    assert "MURGAT scores (rescored)" in rescored.output  # the other 5 records are scored


def test_the_report_notes_a_summary_of_a_newer_version(tmp_path):
    from murgat_local.reports.rundata import load_folder

    folder = tmp_path / "score"
    folder.mkdir()
    (folder / layout.SCORES).write_bytes((SCORE / layout.SCORES).read_bytes())
    newer = {**json.loads((SCORE / layout.SUMMARY).read_text()), "schema_version": CURRENT + 1}
    (folder / layout.SUMMARY).write_text(json.dumps(newer), encoding="utf-8")
    (source,) = load_folder(folder)
    assert any(f"schema_version {CURRENT + 1} is newer" in n for n in source.notes), source.notes
    assert source.summary is None  # none of its numbers is read as if it were version 1


def test_a_generation_summary_is_read_by_its_own_name_or_the_old_one(tmp_path):
    from murgat_local.results import GenerationSummary, read_generation_summary

    cell = {"model": "m", "strategy": "base", "rows": 2, "graded": 2, "accuracy": 0.5}
    old = tmp_path / "old"
    old.mkdir()
    (old / layout.SUMMARY).write_text(json.dumps({"cells": {"m/base": cell}}), "utf-8")
    got = read_generation_summary(old)  # a folder written before the file had its own name
    assert isinstance(got, GenerationSummary) and got.cells["m/base"].accuracy == 0.5
    new = tmp_path / "new"
    new.mkdir()
    (new / layout.SUMMARY).write_text("{}", "utf-8")  # not read: the named file is there
    named = {"cells": {"m/base": {**cell, "accuracy": 1.5}}, "schema_version": 1}
    (new / layout.GENERATION_SUMMARY).write_text(json.dumps(named), "utf-8")
    bad = read_generation_summary(new)
    assert isinstance(bad, ReadError) and "cells.m/base.accuracy" in bad.reason
