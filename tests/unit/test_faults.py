"""One item never stops the run, and failed judge calls are counted and can fail a run."""

from __future__ import annotations

import json

from support.fakes import OracleEngine
from support.oracle_runs import _rows, _run
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.pipeline import protocol as protocol_module

GOOD = "The screen is red (visual, 0:00). Therefore A.\nAnswer: A"


def test_a_nul_byte_in_the_video_field_is_that_items_error(tmp_path, media_root):
    rows = [
        {"id": "nul", "video": "col\x00ors", "model_generation": GOOD},
        {"id": "ok", "video": "colors", "model_generation": GOOD},
    ]
    result, (bad, ok) = _run(tmp_path, media_root, rows)
    assert bad["status"] == "error" and "NUL" in bad["error"]
    assert ok["status"] == "ok" and ok["murgat_s"] == 1.0
    assert result.exit_code == 1


def test_any_exception_while_scoring_one_item_becomes_its_error(tmp_path, media_root, monkeypatch):
    real = protocol_module.segment

    def fragile(generation, **options):
        if "BOOM" in generation:
            raise RuntimeError("the splitter broke")
        return real(generation, **options)

    monkeypatch.setattr(protocol_module, "segment", fragile)
    rows = [
        {"id": "a", "video": "colors", "model_generation": GOOD},
        {"id": "boom", "video": "colors", "model_generation": "BOOM (visual, 0:01)."},
        {"id": "c", "video": "colors", "model_generation": GOOD},
    ]
    result, recs = _run(tmp_path, media_root, rows)
    assert [r["status"] for r in recs] == ["ok", "error", "ok"]
    assert "RuntimeError" in recs[1]["error"] and "the splitter broke" in recs[1]["error"]
    assert result.summary.errors_list[0].id == "boom"


class BrokenDecoder(OracleEngine):
    """Every generation cut off: nothing parses."""

    def _answer(self, req):
        return super()._answer(req)[:-2]


def test_a_run_whose_calls_fail_exits_1_with_the_reason(tmp_path, media_root):
    rows = [{"id": "a", "video": "colors", "model_generation": GOOD}]
    result, (rec,) = _run(tmp_path, media_root, rows, engine=BrokenDecoder())
    assert rec["status"] == "ok" and rec["murgat_s"] is None  # nothing known, nothing invented
    calls = result.summary.judge_calls
    assert calls.failed == calls.total > 0 and calls.failed_fraction == 1.0
    assert result.exit_code == 1 and "failed" in result.summary.failure
    # A threshold the user raises on purpose lets the same run pass.
    result, _ = _run(
        tmp_path / "lenient", media_root, rows, engine=BrokenDecoder(), max_failed_calls=1.0
    )
    assert result.exit_code == 0 and result.summary.failure is None


def test_a_healthy_run_has_no_failed_calls(tmp_path, media_root):
    rows = [{"id": "a", "video": "colors", "model_generation": GOOD}]
    result, _ = _run(tmp_path, media_root, rows)
    assert result.summary.judge_calls.failed == 0 and result.exit_code == 0


def test_cli_item_faults_exit_1_not_2(tmp_path, media_root):
    # Both items fail before any judge is needed, so no model starts.
    rows = [
        {"id": "nul", "video": "a\x00b", "model_generation": GOOD},
        {"id": "gone", "video": "no_such_video", "model_generation": GOOD},
    ]
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app,
        [
            "score",
            str(_rows(tmp_path, rows)),
            "--media-root",
            str(media_root),
            "--out",
            str(out),
            "--judge",
            "tiny-qwen3-omni",
        ],
    )
    assert r.exit_code == 1, r.output
    recs = [json.loads(l) for l in (out / "scores.jsonl").read_text().splitlines()]
    assert [x["id"] for x in recs] == ["nul", "gone"] and all(x["status"] == "error" for x in recs)
