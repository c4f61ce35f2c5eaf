"""`murgat meta-eval`: a judge run measured against hand-built human labels, each statistic
checked against a direct computation (scipy for the correlations)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from support.meta_runs import TRUTH, labels_from, oracle_meta_run, write
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.meta import evaluate, from_record, match_facts
from murgat_local.meta.views import label_views
from murgat_local.results import ScoreRecord


@pytest.fixture(scope="module")
def run(tmp_path_factory, media_root):
    return oracle_meta_run(tmp_path_factory, media_root)


def test_statistics_match_a_direct_computation(run):
    tmp, records = run
    labels = write(tmp / "labels.jsonl", labels_from(records, TRUTH))
    truth, problems = label_views(labels)
    assert problems == []
    judge = {rid: from_record(ScoreRecord.model_validate(r)) for rid, r in records.items()}
    result = evaluate(judge, truth, resamples=2000)
    # subtask 1, by hand: (truth, judge) per sentence
    pairs = [
        (t[0], s["verifiable"]["value"])
        for rid, sents in TRUTH.items()
        for t, s in zip(sents, records[rid]["trace"]["sentences"])
    ]
    tp = sum(t and p for t, p in pairs)
    tn = sum(not t and not p for t, p in pairs)
    pos, neg = sum(t for t, _ in pairs), sum(not t for t, _ in pairs)
    s1 = result["subtask1"]
    assert s1["n"] == len(pairs) == 14
    assert s1["accuracy"] == pytest.approx((tp + tn) / len(pairs))
    assert s1["balanced_accuracy"] == pytest.approx((tp / pos + tn / neg) / 2)
    # subtask 2: the labels reuse the judge's facts, so every fact matches
    s2 = result["subtask2"]
    assert s2["precision"] == s2["recall"] == s2["f1"] == 1.0 and "Jaccard" in s2["rule"]
    # subtask 3: the judge's joint verdicts vs the labelled `entailed`
    joint = [
        (e[0], f["joint"]["value"])
        for rid, sents in TRUTH.items()
        for t, s in zip(sents, records[rid]["trace"]["sentences"])
        if t[1] is not None
        for e, f in zip(t[1], s["facts"])
    ]
    assert result["subtask3"]["n"] == len(joint)
    assert result["subtask3"]["accuracy"] == pytest.approx(
        sum(a == b for a, b in joint) / len(joint)
    )
    # MURGAT-S: the human score is what the metric gives the labels, and the correlations are scipy's
    human = {rid: v.scores["murgat_s"] for rid, v in truth.items()}
    assert human["r1"] == 1.0 and human["r5"] == 1.0
    ids = sorted(human)
    xs = [records[i]["murgat_s"] for i in ids]
    ys = [human[i] for i in ids]
    ms = result["murgat_s"]
    assert ms["n"] == 5
    assert ms["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert ms["spearman"] == pytest.approx(stats.spearmanr(xs, ys).statistic)
    assert ms["kendall"] == pytest.approx(stats.kendalltau(xs, ys).statistic)
    low, high = ms["pearson_ci"]
    assert -1.0 <= low <= high <= 1.0


def test_human_scores_follow_the_metric(run):
    tmp, records = run
    labels, _ = label_views(write(tmp / "l2.jsonl", labels_from(records, TRUTH)))
    r2 = labels["r2"].scores
    # two facts entailed with one of two citations precise (0.5 each), one fact not entailed (0)
    assert r2["precision"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert r2["recall"] == pytest.approx(2 / 3)
    assert r2["coverage"] == 1.0
    assert r2["murgat_s"] == pytest.approx(2 * (1 / 3) * (2 / 3) / (1 / 3 + 2 / 3))
    r4 = labels["r4"].scores
    assert r4["coverage"] == 0.5  # the second verifiable sentence has no citation


def test_undefined_correlations_are_null_with_a_note(run):
    tmp, records = run
    flat = {
        rid: [
            (True, [(True,) + (True,) * (len(f) - 1) for f in facts]) if facts else (v, None)
            for v, facts in sents
        ]
        for rid, sents in TRUTH.items()
    }
    truth, _ = label_views(write(tmp / "flat.jsonl", labels_from(records, flat)))
    judge = {rid: from_record(ScoreRecord.model_validate(r)) for rid, r in records.items()}
    result = evaluate(judge, {k: truth[k] for k in ("r1", "r5")}, resamples=200)
    ms = result["murgat_s"]
    assert ms["n"] == 2 and ms["pearson"] is None and ms["note"]
    assert not any(isinstance(v, float) and np.isnan(v) for v in ms.values())


def test_a_response_that_does_not_align_is_left_out_and_named(run):
    tmp, records = run
    lines = labels_from(records, TRUTH)
    lines[0]["sentences"][1]["text"] = "The screen is purple (visual, 0:02)."
    truth, _ = label_views(write(tmp / "bad.jsonl", lines))
    judge = {rid: from_record(ScoreRecord.model_validate(r)) for rid, r in records.items()}
    result = evaluate(judge, truth, resamples=200)
    assert result["responses"]["misaligned"] == 1
    assert "sentence 2 differs" in result["responses"]["misaligned_examples"]["r1"]
    assert result["subtask1"]["n"] == 14 - 3


def test_fact_matching_rule():
    assert match_facts(
        ["The screen is red.", "A tone plays."], ["a tone plays", "the screen is red"]
    ) == [(0, 1), (1, 0)]
    assert match_facts(["The man waves."], ["A dog barks loudly."]) == []


def test_the_command_ranks_runs_and_gives_inter_annotator_agreement(run):
    tmp, records = run
    labels = write(tmp / "a1.jsonl", labels_from(records, TRUTH))
    other = dict(TRUTH, r1=[(True, [(False, False)]), (False, None), (False, None)])
    second = write(tmp / "a2.jsonl", labels_from(records, other))
    out = tmp / "meta"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(tmp / "judge"),
            "--human",
            str(labels),
            "--human",
            str(second),
            "--out",
            str(out),
            "--resamples",
            "300",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads((out / "meta_eval.json").read_text())
    assert set(report["runs"]) == {"judge"} and report["best"]["subtask1"] == "judge"
    assert report["inter_annotator"]["subtask1"]["n"] == 14
    assert "Judges against human labels" in res.output
    # kappa and alpha between the two annotators: what `murgat annotate`'s agreement view gives
    from murgat_local.annotate.agreement import agreement

    pair = agreement({"a1": label_views(labels)[0], "a2": label_views(second)[0]}, resamples=300)[
        "pairs"
    ][0]
    for block in ("subtask1", "subtask3", "precise"):
        for stat in ("kappa", "alpha"):
            assert report["inter_annotator"][block][stat] == pair[block][stat], (block, stat)
    assert report["inter_annotator"]["subtask1"]["kappa"]["value"] is not None


def test_a_line_that_is_not_a_record_is_named_and_the_rest_measured(run):
    """The one rule of `results.read`: a cut line is printed with its file and line, the run is
    measured on the other records, and the exit status is 1."""
    tmp, records = run
    labels = write(tmp / "cut-labels.jsonl", labels_from(records, TRUTH))
    cut = tmp / "cut"
    cut.mkdir()
    scores = (tmp / "judge" / "scores.jsonl").read_text(encoding="utf-8")
    (cut / "scores.jsonl").write_text('{"id": "r\n' + scores, encoding="utf-8")
    out = tmp / "meta-cut"
    args = ["meta-eval", str(cut), "--human", str(labels), "--out", str(out)]
    res = CliRunner().invoke(app, [*args, "--resamples", "50"])
    assert res.exit_code == 1, res.output
    assert f"{cut / 'scores.jsonl'} line 1: not JSON" in " ".join(res.output.split())
    report = json.loads((out / "meta_eval.json").read_text())
    assert report["runs"]["cut"]["subtask1"]["n"] == 14  # every other record was read
