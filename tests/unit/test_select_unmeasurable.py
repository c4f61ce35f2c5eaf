"""`meta-eval --select` where a stage's judges cannot be measured (the labels hold one class only,
so balanced accuracy is undefined): one judge shared by every run is kept, with a note saying
so; several are not chosen between, and the measurements are still written, exit 1."""

from __future__ import annotations

import copy
import json

from support.human_labels import LABELS, RESPONSES, _write
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


def _all_entailed() -> list[dict]:
    rows = copy.deepcopy(LABELS)
    for line in rows:
        for s in line["sentences"]:
            for f in s.get("facts", []):
                f["entailed"] = True
                f["precise"] = [True] * s["text"].count("visual")
    return rows


def _one_flip(rows: list[dict]) -> list[dict]:
    rows = copy.deepcopy(rows)
    s = rows[0]["sentences"][-1]
    s["verifiable"] = not s["verifiable"]
    return rows


def _score(tmp, media_root, name, **judges):
    runner = Runner(
        RunConfig(**judges, bootstrap_resamples=0), media_root, tmp / name, summary=RunSummary
    )
    try:
        assert runner.run(_write(tmp / "r.jsonl", RESPONSES)).exit_code == 0
    finally:
        runner.close()


def _meta(tmp, runs, truth):
    out = tmp / "meta"
    args = ["meta-eval", *[str(tmp / r) for r in runs], "--human", str(truth), "--out", str(out)]
    res = CliRunner().invoke(app, [*args, "--resamples", "0", "--select", str(tmp / "best.toml")])
    return res, out


def test_one_shared_unmeasurable_judge_is_kept_with_a_note(tmp_path, media_root):
    rows = _all_entailed()
    truth = _write(tmp_path / "truth.jsonl", rows)
    same = f"human:{_write(tmp_path / 'copy.jsonl', [dict(r, annotator='c') for r in rows])}"
    other = f"human:{_write(tmp_path / 'flip.jsonl', _one_flip(rows))}"
    _score(tmp_path, media_root, "a", judge=same)
    _score(tmp_path, media_root, "b", judge=same, verifier=other)
    res, out = _meta(tmp_path, ["a", "b"], truth)
    assert res.exit_code == 0, res.output
    entail = json.loads((out / "meta_eval.json").read_text())["selection"]["stages"]["entail"]
    assert entail["model"] == same and entail["value"] is None
    assert "the only entail judge" in entail["note"]
    assert (tmp_path / "best.toml").is_file()


def test_several_unmeasurable_judges_are_not_chosen_between(tmp_path, media_root):
    rows = _all_entailed()
    truth = _write(tmp_path / "truth.jsonl", rows)
    one = f"human:{_write(tmp_path / 'one.jsonl', [dict(r, annotator='1') for r in rows])}"
    two = f"human:{_write(tmp_path / 'two.jsonl', _one_flip(rows))}"
    _score(tmp_path, media_root, "a", judge=one)
    _score(tmp_path, media_root, "b", judge=two)
    res, out = _meta(tmp_path, ["a", "b"], truth)
    assert res.exit_code == 1
    said = " ".join(res.output.split())
    assert "no judge of the entail stage could be measured" in said
    report = json.loads((out / "meta_eval.json").read_text())  # the measurements stand
    assert set(report["runs"]) == {"a", "b"}
    assert "could be measured" in report["selection"]["error"]
    assert not (tmp_path / "best.toml").exists()
