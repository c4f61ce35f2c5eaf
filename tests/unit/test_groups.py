"""Results per category (`--group-by`): which groups a record is in, `by_group` in summary.json
checked against numbers computed by hand from the records, `rescore`, `compare` and `report`
per group, and the category fields of a response row."""

from __future__ import annotations

import json
from statistics import mean

import pytest
from support.human_labels import _write
from support.labelled_groups import HAND_GROUPS, LABELLED, SCORED_BY_HAND, R
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.inputs.responses import InputError, read_responses
from murgat_local.metrics import stats
from murgat_local.metrics.compare import RunRecords, compare_runs
from murgat_local.metrics.groups import NO_VALUE, group_values
from murgat_local.metrics.intervals import IntervalValues, add_intervals
from murgat_local.metrics.scores import summarize
from murgat_local.results import CURRENT, ScoreRecord

cli = CliRunner()


def test_a_record_is_in_the_group_of_its_value_each_value_of_its_list_or_none():
    r = ScoreRecord.model_validate(
        {
            "model": "m",
            "benchmark": "worldsense",
            "categories": {
                "domain": "Sports",
                "audio_class": ["speech", "music", "speech"],
                "empty": [],
                "blank": "",
                "null": None,
                "benchmark": "from-categories",
            },
        }
    )
    assert group_values(r, "domain") == ("Sports",)
    assert group_values(r, "audio_class") == ("speech", "music")  # each value once
    for field in ("empty", "blank", "null", "missing"):
        assert group_values(r, field) == (NO_VALUE,), field
    assert group_values(r, "model") == ("m",)  # a record field, when categories lack it
    assert group_values(r, "benchmark") == ("from-categories",)  # categories say it first
    assert group_values(r, "question_type") == (NO_VALUE,)
    only_video = ScoreRecord.model_validate({"video": "v"})
    assert group_values(only_video, "video") == (NO_VALUE,)  # only the named record fields
    with pytest.raises(ValueError, match="categories"):  # never read: the schema refuses it
        ScoreRecord.model_validate({"categories": "not an object"})


# Hand-built score records: list-valued and missing categories, an error, open and
# multiple-choice questions, a value left undefined.
RECORDS = [
    {
        "id": "a",
        "status": "ok",
        "murgat_s": 0.5,
        "coverage": 1.0,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "correct": True,
        "question_type": "multiple-choice",
        "categories": {"domain": "Sports", "audio_class": ["speech", "music"]},
    },
    {
        "id": "b",
        "status": "ok",
        "murgat_s": 0.25,
        "coverage": 0.5,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "correct": False,
        "categories": {"domain": "Sports", "audio_class": ["music"]},
    },
    {
        "id": "c",
        "status": "ok",
        "murgat_s": 1.0,
        "coverage": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "correct": True,
        "question_type": "open",
        "categories": {"domain": "News", "audio_class": []},
    },
    {
        "id": "d",
        "status": "ok",
        "murgat_s": None,
        "coverage": None,
        "precision": None,
        "recall": None,
        "f1": None,
        "correct": False,
        "question_type": "open",
        "categories": {"audio_class": ["speech"]},
    },
    {
        "id": "e",
        "status": "error",
        "error": "video not found",
        "murgat_s": None,
        "coverage": None,
        "categories": {"domain": "News"},
    },
    {
        "id": "f",
        "status": "ok",
        "murgat_s": 0.0,
        "coverage": 0.0,
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "scored_fraction": 0.5,
        "correct": None,
    },
]
# The same, as the summary reads them.
TYPED = [ScoreRecord.model_validate(r) for r in RECORDS]
# Which ids each group holds, written out by hand from the records above.
MEMBERS = {
    "domain": {"News": "ce", "Sports": "ab", NO_VALUE: "df"},
    "audio_class": {"music": "ab", "speech": "ad", NO_VALUE: "cef"},
    "question_type": {"multiple-choice": "a", "open": "cd", NO_VALUE: "bef"},
}


def test_by_group_holds_each_groups_means_counts_and_intervals():
    fields = list(MEMBERS)
    summary = summarize(TYPED, fields)
    add_intervals(summary, IntervalValues.of(TYPED, fields), n_resamples=R)
    assert list(summary["by_group"]) == fields
    for field, groups in MEMBERS.items():
        assert list(summary["by_group"][field]) == list(groups)  # by value, (none) last
        for value, ids in groups.items():
            g = summary["by_group"][field][value]
            rs = [r for r in RECORDS if r["id"] in ids]
            ok = [r for r in rs if r["status"] == "ok"]
            assert (g["responses"], g["scored"], g["errors"]) == (
                len(rs),
                len(ok),
                len(rs) - len(ok),
            )
            for m in ("murgat_s", "coverage", "precision", "recall", "f1"):
                values = [r[m] for r in ok if r[m] is not None]
                assert g[m] == (mean(values) if values else None), (field, value, m)
                if len(values) > 1:
                    assert g[f"{m}_ci"] == stats.mean_ci(values, n_resamples=R)["ci"]
            graded = [float(r["correct"]) for r in ok if r["correct"] is not None]
            assert g["qa_accuracy"] == (mean(graded) if graded else None)
            kinds = [
                r.get("question_type", "multiple-choice") for r in ok if r["correct"] is not None
            ]
            assert g["qa_graded"] == {
                "multiple-choice": kinds.count("multiple-choice"),
                "open": kinds.count("open"),
            }
            complete = [
                r["murgat_s"]
                for r in ok
                if r.get("scored_fraction") in (None, 1.0) and r["murgat_s"] is not None
            ]
            assert g["complete_only"]["murgat_s"] == (mean(complete) if complete else None)
    # the whole set: the accuracy block says how many of each kind it graded
    assert (
        summary["qa_graded"] == {"multiple-choice": 2, "open": 2} and summary["qa_accuracy"] == 0.5
    )
    assert (
        summary["by_group"]["domain"]["Sports"]["qa_accuracy_ci"]
        == stats.mean_ci([1.0, 0.0], n_resamples=R)["ci"]
    )


def test_a_responses_categories_are_checked_when_read(tmp_path):
    rows = [
        {
            "id": "ok",
            "video": "v",
            "model_generation": "x",
            "benchmark": "worldsense",
            "question_type": "open",
            "categories": {"domain": "Sports", "audio_class": ["speech"], "none": None},
        },
        {"id": "num", "video": "v", "model_generation": "x", "categories": {"duration": 2}},
        {"id": "nested", "video": "v", "model_generation": "x", "categories": {"a": [["b"]]}},
        {"id": "list", "video": "v", "model_generation": "x", "categories": ["Sports"]},
        {"id": "kind", "video": "v", "model_generation": "x", "question_type": "essay"},
        {"id": "bench", "video": "v", "model_generation": "x", "benchmark": 3},
    ]
    ok, num, nested, listed, kind, bench = read_responses(_write(tmp_path / "r.jsonl", rows))
    assert not isinstance(ok, InputError) and ok.record["categories"]["audio_class"] == ["speech"]
    assert (
        num.reason
        == "field 'categories' entry 'duration' is not a string or a list of strings (int)"
    )
    assert "entry 'a'" in nested.reason and "(list)" in nested.reason
    assert listed.reason == "field 'categories' is not an object (list)"
    assert kind.reason == "field 'question_type' must be 'multiple-choice' or 'open', not 'essay'"
    assert bench.reason == "field 'benchmark' is not a string (int)"


def test_score_group_by_writes_each_groups_numbers(scored):
    out, output = scored
    summary = json.loads((out / "summary.json").read_text())
    records = {r["id"]: r for r in map(json.loads, (out / "scores.jsonl").read_text().splitlines())}
    assert records["h01"]["categories"] == LABELLED["h01"]["categories"]  # carried into the record
    assert (
        records["h01"]["benchmark"] == "worldsense"
        and records["h01"]["question_type"] == "multiple-choice"
    )
    assert "question_type" not in records["h02"]
    assert set(summary["by_group"]) == set(HAND_GROUPS)
    for field, groups in HAND_GROUPS.items():
        assert set(summary["by_group"][field]) == set(groups)  # summary.json's keys are sorted
        for value, ids in groups.items():
            g = summary["by_group"][field][value]
            assert g["responses"] == g["scored"] == len(ids)
            hand = [SCORED_BY_HAND[i] for i in ids if i in SCORED_BY_HAND]
            assert g["murgat_s"] == (pytest.approx(mean(hand)) if hand else None), (field, value)
            values = [records[i]["murgat_s"] for i in ids if records[i]["murgat_s"] is not None]
            if len(values) > 1:
                assert g["murgat_s_ci"] == stats.mean_ci(values, n_resamples=R)["ci"]
    sports = summary["by_group"]["domain"]["Sports"]
    assert sports["qa_accuracy"] == 0.5 and sports["qa_graded"] == {"multiple-choice": 2, "open": 0}
    assert summary["by_group"]["audio_class"]["speech"]["qa_accuracy"] == 1.0
    assert summary["by_group"]["domain"]["News"]["undefined"] == 1
    assert "By domain" in output and "By audio_class" in output


def test_rescore_recomputes_by_group_with_the_same_numbers(scored):
    out, _ = scored
    summary = json.loads((out / "summary.json").read_text())
    args = ["rescore", str(out / "scores.jsonl"), "--resamples", str(R)]
    for f in HAND_GROUPS:
        args += ["--group-by", f]
    r = cli.invoke(app, args)
    assert r.exit_code == 0, r.output
    printed = json.loads(r.output[r.output.index("\n{") + 1 :])
    assert printed["by_group"] == summary["by_group"]
    assert printed["murgat_s_ci"] == summary["murgat_s_ci"]


def _run_file(tmp_path, name, rows):
    return _write(
        tmp_path / name, [{"status": "ok", "coverage": 1.0, "f1": 1.0, **r} for r in rows]
    )


def test_compare_group_by_gives_each_groups_paired_difference(tmp_path):
    doms = ["Sports", "Sports", "Sports", "News", "News", None]
    a = [
        {"id": str(i), "murgat_s": v, "correct": True, "categories": {"domain": d} if d else {}}
        for i, (v, d) in enumerate(zip([0.2, 0.4, 0.6, 0.5, 0.5, 0.1], doms))
    ]
    b = [
        {"id": str(i), "murgat_s": v, "correct": i != 0}
        for i, v in enumerate([0.5, 0.6, 0.9, 0.5, 0.3, 0.3])
    ]
    path_a, path_b = _run_file(tmp_path, "a.jsonl", a), _run_file(tmp_path, "b.jsonl", b)
    out = tmp_path / "cmp.json"
    r = cli.invoke(
        app,
        [
            "compare",
            str(path_a),
            str(path_b),
            "--group-by",
            "domain",
            "--out",
            str(out),
            "--resamples",
            str(R),
        ],
    )
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())
    groups = rep["by_group"]["domain"]  # read from A's records (B's carry no categories)
    assert {v: g["matched"] for v, g in groups.items()} == {"News": 2, "Sports": 3, NO_VALUE: 1}
    sports = groups["Sports"]["metrics"]["murgat_s"]
    assert sports["n"] == 3 and sports["difference"] == pytest.approx((0.3 + 0.2 + 0.3) / 3)
    assert (
        sports["ci"]
        == stats.paired_difference([0.5, 0.6, 0.9], [0.2, 0.4, 0.6], n_resamples=R)["ci"]
    )
    assert groups["News"]["metrics"]["murgat_s"]["difference"] == pytest.approx(-0.1)
    assert groups["Sports"]["metrics"]["accuracy"]["difference"] == pytest.approx(-1 / 3)
    one = groups[NO_VALUE]["metrics"][
        "murgat_s"
    ]  # one pair: no interval nor p-value, and notes say so
    assert one["difference"] == pytest.approx(0.2) and one["ci"] is None and one["p_value"] is None
    assert "one value" in one["note"] and "one pair: no permutation test" in one["note"]
    assert rep["metrics"]["murgat_s"]["n"] == 6  # the whole comparison is unchanged
    assert rep == {
        **compare_runs(
            RunRecords.of(_records(path_a), ["domain"]),
            RunRecords.of(_records(path_b)),
            n_resamples=R,
        ),
        "runs": rep["runs"],
        "schema_version": CURRENT,
    }
    assert "B - A by domain" in r.output


def _records(path):
    return [ScoreRecord.model_validate_json(line) for line in path.read_text().splitlines()]


def test_grouped_summaries_keep_nothing_per_record():
    """What `murgat score` adds up per group while it runs stays the same size however many
    records pass (the intervals' values are read back from scores.jsonl afterwards)."""
    import random
    import tracemalloc

    from murgat_local.metrics.groups import Grouped
    from murgat_local.metrics.scores import Summary

    rng = random.Random(3)

    def record(i):
        return ScoreRecord.model_validate(
            {
                "status": "ok",
                "murgat_s": rng.random(),
                "coverage": rng.random(),
                "precision": 0.5,
                "recall": 1.0,
                "f1": rng.random(),
                "correct": rng.random() < 0.5,
                "model": f"m{i % 2}",
                "question_type": ["open", "multiple-choice"][i % 2],
                "categories": {"domain": f"d{i % 5}", "tags": ["a", "b", "c"][: i % 4]},
            }
        )

    grouped = Grouped(["domain", "tags", "model", "question_type"], Summary)
    ours = [tracemalloc.Filter(True, "*/murgat_local/metrics/*")]
    tracemalloc.start(1)
    try:
        for i in range(2_000):
            grouped.add(record(i))
        early = tracemalloc.take_snapshot()
        for i in range(2_000, 20_000):
            grouped.add(record(i))
        late = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(
        d.size_diff
        for d in late.filter_traces(ours).compare_to(early.filter_traces(ours), "filename")
    )
    assert grown < 2_000, grown  # 18,000 records later; one float kept per record would be 144 kB
    assert grouped.result()["tags"]["a"]["responses"] == 15_000
