"""Issue 44's guarantees as `murgat meta-eval` and `murgat score --escalate-to` use them: the
judge chosen on one part of the labelled responses and certified on the other (a judge that is
best only on the certifying part is not chosen), `--min-kept`, the confidence of the decoded
label, and the cascades certified on what reaches each judge, written into best.toml and read
back by `murgat score`'s configuration. The statistics themselves are tested in
test_guarantees.py; here, each number is checked against `metrics.guarantees` called on pairs
read from the records by hand."""

from __future__ import annotations

import copy
import json
import tomllib

import pytest
from support.meta_runs import TRUTH, labels_from, oracle_meta_run, run_folder, with_p_yes, write
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import load_config
from murgat_local.judges.cascade import Step
from murgat_local.meta.agreement import Aligned, Judgement
from murgat_local.meta.calibrate import certify_best, split_responses, stage_certification
from murgat_local.metrics.guarantees import certify, certify_cascade


@pytest.fixture(scope="module")
def run(tmp_path_factory, media_root):
    return oracle_meta_run(tmp_path_factory, media_root)


def _aligned(rows: list[Judgement]) -> Aligned:
    a = Aligned(sorted({j.key[0] for j in rows}))
    for j in rows:
        a.confidence["verifiable"].append(j)
        a.subtask1.append((j.truth, j.verdict))
    return a


def test_the_decoded_label_is_certified_at_its_own_probability():
    # 100 verdicts decoded YES with p_yes 0.45 (a YES spelt in two tokens) where people said NO,
    # and 100 sure NOs people agree with. Read as p_yes >= 0.5, the first would be NOs at
    # confidence 0.55, all agreeing: kept. As decoded, they are YESes at 0.45: never kept.
    rows = [Judgement(0.45, False, True, (f"a{i}", 0)) for i in range(100)]
    rows += [Judgement(0.2, False, False, (f"b{i}", 0)) for i in range(100)]
    got = stage_certification(_aligned(rows), target=0.9, alpha=0.1)["verifiable"]
    assert got["threshold"] == 0.5 and got["kept"] == 100 and got["coverage"] == 0.5
    assert got["agreement"] == 1.0  # the sure NOs only
    at_half = next(t for t in got["tests"] if t["threshold"] == 0.5)
    assert (at_half["kept"], at_half["disagree"]) == (100, 0)
    want = certify([0.45] * 100 + [0.8] * 100, [False] * 100 + [True] * 100).as_dict()
    assert {k: got[k] for k in want} == want


def test_the_best_run_is_chosen_on_one_part_and_certified_on_the_other():
    ids = [f"r{i:03d}" for i in range(200)]
    split = split_responses(ids, seed=3, fraction=0.5)
    assert not split.selection & split.certification
    assert split.selection | split.certification == set(ids) and len(split.selection) == 100
    assert split_responses(list(reversed(ids)), seed=3) == split  # not the order read in

    def judge(wrong_on) -> Aligned:  # every response two sentences, YES and NO in turn
        rows = []
        for rid in ids:
            for n in range(2):
                truth = n == 0
                verdict = (not truth) if rid in wrong_on else truth
                rows.append(Judgement(0.97 if verdict else 0.03, truth, verdict, (rid, n)))
        return _aligned(rows)

    # "sharp" is right on every certifying response and wrong on a third of the choosing ones:
    # the better judge over all labels, and perfect where it would be certified. "steady" is
    # right where the choice is made and wrong everywhere else. Chosen: steady.
    wrong = sorted(split.selection)[::3]
    runs = {"sharp": judge(set(wrong)), "steady": judge(split.certification)}
    got = certify_best(runs, split, target=0.9, alpha=0.1)["verifiable"]
    assert got["run"] == "steady"
    assert got["chosen_on"] == {"seed": 3, "fraction": 0.5, "selection": 100, "certification": 100}
    # certified on the certifying part alone, where it is always wrong: nothing certified
    assert got["n"] == 200 and got["threshold"] is None
    # chosen by `select_then_certify` on the judgements about the choosing responses
    assert got["split"]["n_select"] == 200 and got["split"]["n_certify"] == 200
    assert got["split"]["selection_balanced_accuracy"] == 1.0
    # with one run there is no choice: every label certifies
    alone = certify_best({"sharp": runs["sharp"]}, None, target=0.9, alpha=0.1)["verifiable"]
    assert alone["n"] == 400 and alone["chosen_on"] is None


def _flipped(records: dict, ids) -> dict:
    """The records with every verifiability verdict of the responses `ids` turned round, sure."""
    out = copy.deepcopy(records)
    for rid in ids:
        for s in out[rid]["trace"]["sentences"]:
            v = s["verifiable"]
            v["value"] = not v["value"]
            v["p_yes"] = 0.96 if v["value"] else 0.04
    return out


def _judged_by(folder, name: str):
    summary = json.loads((folder / "summary.json").read_text())
    summary["models"] = dict.fromkeys(summary["models"], name)
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def _meta_eval(*args):
    res = CliRunner().invoke(app, ["meta-eval", *map(str, args), "--resamples", "100"])
    assert res.exit_code == 0, res.output
    return res


def _by_hand(records: dict, truth: dict, ids) -> dict:
    """Per verifiable judgement of the responses `ids`, keyed as meta-eval aligns them:
    (decoded confidence, verdict, person's label)."""
    out = {}
    for rid in sorted(ids):
        for n, (s, (label, _)) in enumerate(zip(records[rid]["trace"]["sentences"], truth[rid])):
            v = s["verifiable"]
            out[(rid, n)] = (v["p_yes"] if v["value"] else 1 - v["p_yes"], v["value"], label)
    return out


def test_select_chooses_on_one_part_certifies_on_the_other_and_writes_cascades(run, tmp_path):
    tmp, records = run
    recs, truth = with_p_yes(records, TRUTH, 40)  # 200 responses, all labelled
    labels = write(tmp_path / "labels.jsonl", labels_from(recs, truth))
    split = split_responses(list(truth), seed=0, fraction=0.5)
    sharp = _flipped(recs, sorted(split.selection)[::2])
    steady = _flipped(recs, split.certification)
    folders = [
        _judged_by(run_folder(tmp / "judge", tmp_path / "sharp", sharp), "judge-a"),
        _judged_by(run_folder(tmp / "judge", tmp_path / "steady", steady), "judge-b"),
    ]
    best = tmp_path / "best.toml"
    res = _meta_eval(
        *folders, "--human", labels, "--out", tmp_path / "m", "--certify", 0.9, "--select", best
    )
    report = json.loads((tmp_path / "m" / "meta_eval.json").read_text())
    # over all labels sharp is the better verifier; on the choosing half, steady
    assert report["best"]["subtask1"] == "sharp"
    assert report["selection"]["stages"]["verifiable"]["model"] == "judge-b"
    assert set(report["split"]["selection_ids"]) == split.selection
    assert "chosen on 100 labelled responses, certified on 100 others" in res.output
    # certified on the other half only, where steady is always wrong
    cert = report["certification"]["verifiable"]
    mine = _by_hand(steady, truth, split.certification)
    want = certify([c for c, _, _ in mine.values()], [v == y for _, v, y in mine.values()])
    assert cert["judge"] == "judge-b" and cert["n"] == len(mine) == want.n
    assert cert["threshold"] is None is want.threshold
    # The cascades `--escalate-to` can ask after the chosen judge, each judge certified on the
    # certifying half's items that the judges before it escalate.
    cascades = {(c["stage"], tuple(c["judges"])): c for c in report["cascades"]}
    entailer = report["selection"]["stages"]["entail"]["model"]  # equal on entailment
    others = {"judge-a", "judge-b"} - {entailer}
    assert set(cascades) == {
        ("verifiable", ("judge-b", "judge-a")),
        ("entail", (entailer, *others)),
    }
    theirs = _by_hand(sharp, truth, split.certification)
    keys = sorted(mine)
    want = certify_cascade(
        [
            ([mine[k][0] for k in keys], [mine[k][1] for k in keys]),
            ([theirs[k][0] for k in keys], [theirs[k][1] for k in keys]),
        ],
        [mine[k][2] for k in keys],
        target=0.9,
        alpha=0.1,
        seed=0,
        min_kept=50,
    )
    got = cascades[("verifiable", ("judge-b", "judge-a"))]
    assert got["n"] == len(keys)
    for step, c in zip(got["steps"], want):
        assert (step["threshold"], step["n"], step["coverage"]) == (c.threshold, c.n, c.coverage)
    # written into best.toml and read back by `murgat score --escalate-to`
    esc = tomllib.loads(best.read_text())["escalation"]
    entry = next(c for c in esc["cascades"] if c["stage"] == "verifiable")
    assert entry["judges"] == ["judge-b", "judge-a"] and entry["n"] == len(keys)
    assert [s.get("threshold") for s in entry["steps"]] == [c.threshold for c in want]
    config = load_config(best, {"escalate_to": ["judge-a"]})
    assert config.cascades()["verifiable"] == [Step("judge-b", want[0].threshold)] + [
        Step("judge-a", want[1].threshold)
    ]
    # entail: judge-a is asked after the entailer, or is the entailer (nowhere further)
    assert config.cascade_notes() == {}
    other = load_config(best, {"escalate_to": ["judge-c"]})
    assert other.cascades()["verifiable"][1] == Step("judge-c", None)
    assert "no certified cascade judge-b -> judge-c" in other.cascade_notes()["verifiable"]

    # Without --select, the best run is chosen and certified the same way.
    res = _meta_eval(*folders, "--human", labels, "--out", tmp_path / "c", "--certify", 0.9)
    report = json.loads((tmp_path / "c" / "meta_eval.json").read_text())
    assert report["certification"]["verifiable"]["run"] == "steady"
    assert report["certification"]["verifiable"]["n"] == len(mine)
    assert "chosen on 100 labelled responses, certified on 100 others" in res.output


def test_min_kept_is_where_the_test_starts(run, tmp_path):
    tmp, records = run
    recs, truth = with_p_yes(records, TRUTH, 3)  # 42 sentences: fewer than 50
    folder = run_folder(tmp / "judge", tmp_path / "small", recs)
    labels = write(tmp_path / "labels.jsonl", labels_from(recs, truth))
    got = {}
    for kept in (50, 20):
        out = tmp_path / f"m{kept}"
        args = ["--min-kept", kept] if kept != 50 else []  # 50: the default
        _meta_eval(folder, "--human", labels, "--out", out, "--certify", 0.9, *args)
        got[kept] = json.loads((out / "meta_eval.json").read_text())["certification"]
    assert got[50]["verifiable"]["threshold"] is None
    assert "min_kept 50" in got[50]["verifiable"]["note"]
    assert got[20]["verifiable"]["min_kept"] == 20 and got[20]["verifiable"]["threshold"] == 0.63
    for t in got[20]["verifiable"]["tests"]:
        if t["result"] != "not reached":
            assert (t["result"] == "too few") == (t["kept"] < 20 or 0.9 ** t["kept"] > 0.1)
    res = CliRunner().invoke(
        app, ["meta-eval", str(folder), "--human", str(labels), "--out", "x", "--min-kept", "0"]
    )
    assert res.exit_code == 2 and "--min-kept" in res.output
