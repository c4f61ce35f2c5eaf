"""meta_eval.json's blocks as `results.meta_blocks` types them: every key the current murgat
writes is named (none is left as an unnamed extra), a file read and dumped again is the file
that was read, and a key an older or newer murgat wrote is kept, not refused."""

from __future__ import annotations

import json

from pydantic import BaseModel
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.results import MetaEval
from murgat_local.results.meta_blocks import Calibration, RunAgreement


def _unnamed(value, where: str = "") -> list[str]:
    """Every key kept as an extra, anywhere below `value`, by its path."""
    if isinstance(value, BaseModel):
        out = [f"{where}.{k}" for k in value.model_extra or {}]
        for name in value.model_fields_set:
            out += _unnamed(getattr(value, name), f"{where}.{name}")
        return out
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _unnamed(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for v in value for p in _unnamed(v, f"{where}[]")]
    return []


def test_every_block_murgat_writes_is_named_and_read_back_as_written(select_runs, tmp_path):
    tmp, truth, _, judges = select_runs
    second = judges["j1"].removeprefix("human:")  # a second annotator: j1's labels
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            *(str(tmp / n) for n in ("j1", "j2", "j3")),
            "--human",
            str(truth),
            "--human",
            second,
            "--out",
            str(tmp_path / "meta"),
            "--resamples",
            "50",
            "--certify",
            "0.9",
            "--select",
            str(tmp_path / "best.toml"),
        ],
    )
    assert res.exit_code == 0, res.output
    written = json.loads((tmp_path / "meta" / "meta_eval.json").read_text())
    report = MetaEval.model_validate(written)
    # every block is there, so every block's keys are checked
    assert report.runs and report.inter_annotator and report.labels_sampling
    assert report.split and report.certification and report.cascades and report.selection
    run = report.runs["j1"]
    assert run.calibration and run.certification and run.ppi and run.judges
    assert report.selection.combination and report.selection.stages
    assert _unnamed(report) == []
    assert json.dumps(report.dump(), sort_keys=True) == json.dumps(written, sort_keys=True)
    # the blocks read as attributes
    verifiable = report.selection.choice("verifiable")
    assert verifiable is not None and verifiable.statistic == "subtask1.balanced_accuracy"
    assert run.judge_of("verifiable") == judges["j1"] and run.judge_of("no such stage") is None


def test_a_key_this_murgat_does_not_name_is_kept():
    block = {
        "subtask1": {"balanced_accuracy": 0.5, "from_a_newer_murgat": [1, 2]},
        "calibration": {"verifiable": {"n": 0, "bins": [], "notes": {}, "mystery": "x"}},
        "judges": {"verifiable": "m"},
    }
    report = MetaEval.model_validate({"runs": {"r": block}})
    run = report.runs["r"] if report.runs else RunAgreement()
    assert run.subtask1 is not None and run.subtask1.model_extra == {"from_a_newer_murgat": [1, 2]}
    assert isinstance(run.calibration["verifiable"], Calibration)
    assert report.dump()["runs"] == {"r": block}
    assert sorted(_unnamed(report)) == [
        ".runs.r.calibration.verifiable.mystery",
        ".runs.r.subtask1.from_a_newer_murgat",
    ]
