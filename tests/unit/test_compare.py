"""`murgat compare` on two real (oracle-judged) runs with a known difference, and the intervals
a run's summary.json carries."""

from __future__ import annotations

import json

import pytest
from support.oracle_runs import _run
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.metrics.compare import RunRecords, compare_runs
from murgat_local.results import ScoreRecord

R = 999
cli = CliRunner()
RIGHT = "The screen is red (visual, 0:00). Therefore A.\nAnswer: {}"
WRONG = "The screen is green (visual, 0:00). Therefore A.\nAnswer: {}"  # 0:00 is red: MURGAT-S 0


def _row(rid, text, letter="A", video="colors", model=None):
    row = {
        "id": rid,
        "video": video,
        "question": "Which colour?",
        "options": ["red", "green"],
        "answer": "A",
        "model_generation": text.format(letter),
    }
    return {**row, "model": model} if model else row


def _runs(tmp_path, media_root):
    """A: 20 right answers. B: the same ids, 12 citing the wrong colour (MURGAT-S 1 -> 0) and 5
    answering B (correct -> wrong). Each run also holds an id the other lacks, and `bad` erred in B."""
    a = [_row(f"r{i}", RIGHT) for i in range(20)] + [_row("a_only", RIGHT), _row("bad", RIGHT)]
    b = [
        _row(f"r{i}", WRONG if i < 12 else RIGHT, "B" if i < 5 else "A", model=f"m{i % 2}")
        for i in range(20)
    ]
    b += [_row("b_only", RIGHT), _row("bad", RIGHT, video="missing")]
    out = {}
    for name, rows in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        result, _ = _run(tmp_path / name, media_root, rows, bootstrap_resamples=R)
        out[name] = result
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, media_root):
    return _runs(tmp_path_factory.mktemp("compare"), media_root)


def test_compare_reports_the_known_difference(runs, tmp_path):
    a, b = runs["a"].records_path.parent, runs["b"].records_path.parent
    out = tmp_path / "cmp.json"
    r = cli.invoke(app, ["compare", str(a), str(b), "--out", str(out), "--resamples", str(R)])
    assert r.exit_code == 0, r.output
    assert "murgat_s" in r.output and "B - A" in r.output
    rep = json.loads(out.read_text())
    assert rep["counts"] == {
        "matched": 20,
        "only_a": 1,
        "only_b": 1,
        "errored_a": 0,
        "errored_b": 1,
        "errored_either": 1,
        "scored_by_one_run": 3,
    }
    m = rep["metrics"]["murgat_s"]
    assert m["n"] == 20 and m["mean_a"] == 1.0 and m["mean_b"] == pytest.approx(0.4)
    assert m["difference"] == pytest.approx(-0.6)
    assert m["ci"][1] < 0 and m["p_value"] < 0.01  # a clear difference
    assert rep["metrics"]["f1"]["difference"] == pytest.approx(-0.6)
    acc = rep["metrics"]["accuracy"]
    assert acc["n"] == 20 and acc["difference"] == pytest.approx(-0.25) and acc["ci"][1] < 0
    cov = rep["metrics"]["coverage"]  # both cite every sentence: no difference at all
    assert cov["difference"] == 0.0 and cov["ci"] == [0.0, 0.0] and cov["p_value"] == 1.0
    assert rep["method"]["resamples"] == R and rep["difference"] == "B - A"
    json.dumps(rep, allow_nan=False)


def test_a_run_compared_with_itself_differs_by_nothing(runs):
    path = runs["b"].records_path
    r = cli.invoke(app, ["compare", str(path), str(path.parent), "--resamples", str(R)])
    assert r.exit_code == 0, r.output
    recs = [ScoreRecord.model_validate_json(l) for l in path.read_text().splitlines()]
    rep = compare_runs(RunRecords.of(recs), RunRecords.of(recs), n_resamples=R)
    for name, m in rep["metrics"].items():
        assert m["difference"] == 0.0 and m["ci"][0] <= 0.0 <= m["ci"][1] and m["p_value"] == 1.0, (
            name
        )
    assert (
        rep["counts"]["matched"] == 21 and rep["counts"]["only_a"] == rep["counts"]["only_b"] == 0
    )


def test_hand_built_records_without_an_answer_check(tmp_path):
    def write(name, rows):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return p

    a = write(
        "a.jsonl",
        [
            {"id": i, "status": "ok", "murgat_s": v, "coverage": 1.0, "f1": v}
            for i, v in enumerate([0.1, 0.5, None, 0.9])
        ],
    )
    b = write(
        "b.jsonl",
        [
            {"id": i, "status": "ok", "murgat_s": v, "coverage": 1.0, "f1": v}
            for i, v in enumerate([0.3, 0.6, 0.2, 1.0, 0.4])
        ],
    )
    out = tmp_path / "r.json"
    r = cli.invoke(app, ["compare", str(a), str(b), "--out", str(out), "--resamples", str(R)])
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())
    s = rep["metrics"]["murgat_s"]  # the pair with a null is skipped
    assert s["n"] == 3 and s["difference"] == pytest.approx((0.2 + 0.1 + 0.1) / 3)
    acc = rep["metrics"]["accuracy"]
    assert (
        acc["n"] == 0
        and acc["difference"] is None
        and acc["ci"] is None
        and "answer check" in acc["note"]
    )
    assert rep["counts"]["only_b"] == 1 and rep["counts"]["matched"] == 4
    # Not a run: a usage error.
    assert cli.invoke(app, ["compare", str(tmp_path / "nope"), str(b)]).exit_code == 2


def test_a_runs_summary_has_intervals_overall_and_per_model(runs):
    summary = runs["b"].summary.dump()  # as summary.json holds it
    on_disk = json.loads(runs["b"].summary_path.read_text())
    assert on_disk["murgat_s_ci"] == summary["murgat_s_ci"] and on_disk["ci"]["resamples"] == R
    assert set(summary["by_model"]) == {"m0", "m1"}
    for section in (summary, summary["complete_only"], *summary["by_model"].values()):
        low, high = section["murgat_s_ci"]
        assert low <= section["murgat_s"] <= high and low < high
        if "qa_accuracy" in section:  # not in complete_only
            assert (
                section["qa_accuracy_ci"][0]
                <= section["qa_accuracy"]
                <= section["qa_accuracy_ci"][1]
            )
    assert summary["qa_accuracy_ci"][0] < summary["qa_accuracy"] < summary["qa_accuracy_ci"][1]


def _grouped_report(tmp_path):
    """`murgat compare --group-by domain --out` on two hand-built runs; the file's path."""

    def write(name, values, domains=None):
        p = tmp_path / name
        rows = [
            {"id": str(i), "status": "ok", "murgat_s": v, "coverage": 1.0, "f1": v}
            | ({"correct": v > 0.4, "categories": {"domain": domains[i]}} if domains else {})
            for i, v in enumerate(values)
        ]
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return p

    a = write("a.jsonl", [0.1, 0.5, 0.7, 0.9], ["news", "news", "sport", "sport"])
    b = write("b.jsonl", [0.3, 0.6, 0.2, 1.0, 0.4])
    out = tmp_path / "cmp.json"
    args = ["compare", str(a), str(b), "--group-by", "domain", "--out", str(out)]
    r = cli.invoke(app, [*args, "--resamples", "99"])
    assert r.exit_code == 0, r.output
    return out


def test_the_written_comparison_is_a_versioned_report_that_reads_back_byte_for_byte(tmp_path):
    from murgat_local.jsonl import dumps_record
    from murgat_local.results import CURRENT, Comparison, read_comparison

    out = _grouped_report(tmp_path)
    text = out.read_text(encoding="utf-8")
    assert json.loads(text)["schema_version"] == CURRENT
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(text), Comparison.model_json_schema())
    got = read_comparison(out)
    assert isinstance(got, Comparison), got
    assert got.counts.matched == 4 and got.counts.only_b == 1 and got.runs.b.endswith("b.jsonl")
    assert got.metrics.murgat_s.n == 4 and got.metrics.accuracy.n == 0
    assert set(got.by_group["domain"]) == {"news", "sport"}
    assert got.by_group["domain"]["news"].metrics.murgat_s.difference == pytest.approx(0.15)
    assert got.method.groups  # said only with --group-by
    assert dumps_record(got.dump(), indent=2, sort_keys=True) + "\n" == text


def test_murgat_schema_comparison_describes_every_field():
    from murgat_local.results import Comparison

    got = cli.invoke(app, ["schema", "comparison"])
    assert got.exit_code == 0, got.output
    schema = json.loads(got.stdout)
    assert schema == Comparison.model_json_schema()
    parts = [("Comparison", schema), *schema["$defs"].items()]
    fields = {f"{n}.{k}": v for n, part in parts for k, v in part.get("properties", {}).items()}
    assert {"Comparison.by_group", "PairedDifference.p_value", "Counts.matched"} <= set(fields)
    assert [where for where, spec in fields.items() if not spec.get("description")] == []
    assert "comparison" in cli.invoke(app, ["schema"]).stdout


@pytest.mark.parametrize(
    ("where", "value", "named"),
    [
        (("metrics", "murgat_s", "p_value"), 2, "metrics.murgat_s.p_value"),
        (("counts", "matched"), "4", "counts.matched"),
        (("by_group", "domain", "news", "metrics", "f1", "ci"), [0.1], "f1.ci"),
        (("metrics", "coverage", "difference"), -1.5, "metrics.coverage.difference"),
        (("records", "c"), 1, "records.c"),
    ],
)
def test_a_hand_broken_comparison_is_a_read_error_naming_the_key(tmp_path, where, value, named):
    from murgat_local.results import ReadError, read_comparison

    out = _grouped_report(tmp_path)
    data = json.loads(out.read_text(encoding="utf-8"))
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    out.write_text(json.dumps(data), encoding="utf-8")
    got = read_comparison(out)
    assert isinstance(got, ReadError) and got.path == out, got
    assert named in got.reason and "comparison report" in got.reason, got.reason
