"""`murgat meta-eval`'s calibration, certification and PPI blocks: an oracle run's records with a
`p_yes` beside each yes/no verdict (as `murgat score` records it), measured against labels, each
block checked against the pure functions in `metrics` on pairs read by hand; the choice of the
best run made on one part of the labelled responses and certified on the other; best.toml's
`[escalation]` read back by `murgat score`'s configuration; the diagrams in `murgat report`."""

from __future__ import annotations

import copy
import json
import tomllib

import pytest
from pydantic import ValidationError
from support.meta_runs import TRUTH, labels_from, oracle_meta_run, write
from support.meta_runs import run_folder as _run_folder
from support.meta_runs import with_p_yes as _with_p_yes
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import load_config
from murgat_local.meta.views import from_record, p_yes, precise_p_yes
from murgat_local.metrics.calibration import calibration
from murgat_local.metrics.guarantees import certify as certify_decoded
from murgat_local.metrics.guarantees import certify_p_yes as certify
from murgat_local.metrics.guarantees import ppi_mean
from murgat_local.metrics.ppi import corrected_mean
from murgat_local.panel_config import EscalationConfig
from murgat_local.results import ScoreRecord
from murgat_local.results.records import FactRecord, Verdict


@pytest.fixture(scope="module")
def run(tmp_path_factory, media_root):
    return oracle_meta_run(tmp_path_factory, media_root)


# The five responses, repeated under new ids: 560 sentences, of which the labelled half's
# certification part (a quarter) keeps more than --min-kept's 50.
COPIES = 40


def _pairs(records: dict, labels: dict, ids=None):
    """(p_yes, human) per stage, read from the records by hand, responses in id order (only
    those in `ids` when given)."""
    ver, ent = [], []
    for rid, sents in sorted(labels.items()):
        if ids is not None and rid not in ids:
            continue
        for s, (verifiable, facts) in zip(records[rid]["trace"]["sentences"], sents):
            ver.append((s["verifiable"]["p_yes"], verifiable))
            for f, t in zip(s.get("facts") or [], facts or []):
                ent.append((f["joint"]["p_yes"], t[0]))
    return ver, ent


def test_p_yes_is_read_through_one_accessor_and_older_records_have_none():
    assert p_yes(Verdict.model_validate({"value": True, "p_yes": 0.83})) == 0.83
    for judgement in ({"value": True}, {"value": True, "p_yes": None}):
        assert p_yes(Verdict.model_validate(judgement)) is None
    assert p_yes(None) is None
    # a p_yes that is no probability never reaches it: the record's reader refuses it
    for bad in ("0.8", 1.5, float("nan"), True):
        with pytest.raises(ValidationError, match="p_yes"):
            Verdict.model_validate({"value": True, "p_yes": bad})
    # precise given entailed: alone yes or else the others without it no
    fact = FactRecord.model_validate(
        {
            "alone": {"0": {"value": True, "p_yes": 0.9}, "1": {"value": False, "p_yes": 0.2}},
            "without": {"1": {"value": False, "p_yes": 0.3}},
        }
    )
    probs, judged = precise_p_yes(fact, [True, True, False])
    assert probs[0] == 0.9 and probs[1] == pytest.approx(0.2 + 0.8 * 0.7) and probs[2] is None
    assert judged == (True, True, False)
    assert precise_p_yes(FactRecord(), [True]) == ((None,), (False,))  # the rule decides


def test_meta_eval_calibration_certification_ppi_and_best_toml(run, tmp_path):
    tmp, records = run
    recs, truth = _with_p_yes(records, TRUTH, COPIES)
    folder = _run_folder(tmp / "judge", tmp_path / "calibrated", recs)
    # an older run of the same judge: no p_yes anywhere
    plain = {rid: copy.deepcopy(r) for rid, r in recs.items()}
    for r in plain.values():
        for s in r["trace"]["sentences"]:
            s["verifiable"].pop("p_yes")
            for f in s.get("facts") or []:
                f["joint"].pop("p_yes")
    older = _run_folder(tmp / "judge", tmp_path / "older", plain)
    # people labelled half the responses: the others are the PPI's unlabelled ones
    labelled = {rid: t for rid, t in truth.items() if int(rid.rsplit("-", 1)[1]) % 2 == 0}
    # asked in a random order, as `murgat annotate` records it: PPI applies
    lines = [{**line, "order": {"seed": 7}} for line in labels_from(recs, labelled)]
    labels = write(tmp_path / "labels.jsonl", lines)
    out, best = tmp_path / "meta", tmp_path / "best.toml"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(folder),
            str(older),
            "--human",
            str(labels),
            "--out",
            str(out),
            "--resamples",
            "200",
            "--certify",
            "0.9",
            "--alpha",
            "0.1",
            "--select",
            str(best),
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads((out / "meta_eval.json").read_text())
    block = report["runs"]["calibrated"]
    ver, ent = _pairs(recs, labelled)
    for stage, pairs in (("verifiable", ver), ("entail", ent)):
        want = calibration(*zip(*pairs), n_resamples=200, seed=0)
        got = block["calibration"][stage]
        assert got["n"] == len(pairs) and got["missing_p_yes"] == 0
        for key in ("ece", "brier", "auroc", "ece_ci", "brier_ci", "auroc_ci"):
            assert got[key] == pytest.approx(want[key]), (stage, key)
        assert got["bins"] == want["bins"]
        assert (out / f"reliability_calibrated_{stage}.png").read_bytes()[:4] == b"\x89PNG"
        cert = certify(*zip(*pairs), target=0.9, alpha=0.1)
        assert block["certification"][stage]["threshold"] == cert["threshold"]
    # r2's first fact cites two segments, both judged precise by people and the judge (it says
    # yes to the first alone; no to the second alone, yes to the first without it):
    # p = 0.9 and 0.1 + 0.9 (1 - 0.9) by the scoring rule
    precise = block["calibration"]["precise"]
    half = COPIES // 2  # the labelled copies
    want = calibration([0.9, 0.19] * half, [True, False] * half, n_resamples=200, seed=0)
    assert (precise["n"], precise["missing_p_yes"]) == (2 * half, 0)
    assert precise["ece"] == pytest.approx(want["ece"]) and precise["auroc"] == 1.0
    # the older run: every pair counted, none measured, and said why
    old = report["runs"]["older"]["calibration"]["verifiable"]
    assert old["n"] == 0 and old["missing_p_yes"] == len(ver) and old["ece"] is None
    assert "none of the" in old["notes"]["p_yes"]
    # Two runs: a choice, so the labelled responses are split at random, half to choose, half
    # to certify; the parts are disjoint and recorded.
    split = report["split"]
    chose, certified = set(split["selection_ids"]), set(split["certification_ids"])
    assert not chose & certified and chose | certified == set(labelled)
    assert (split["seed"], split["fraction"]) == (0, 0.5)
    assert len(chose) == split["selection"] == len(labelled) // 2 == split["certification"]
    assert "chosen on 50 labelled responses, certified on 50 others" in res.output
    # certification of the selected combination, on the certification part only: what
    # best.toml carries for `murgat score`
    cert = report["certification"]
    ver_c, ent_c = _pairs(recs, labelled, certified)
    for stage, pairs in (("verifiable", ver_c), ("entail", ent_c)):
        decoded = [(p if p >= 0.5 else 1 - p, (p >= 0.5) == y) for p, y in pairs]
        want = certify_decoded(*zip(*decoded), target=0.9, alpha=0.1, min_kept=50).as_dict()
        got = cert[stage]
        assert got["judge"] == "oracle" and got["n"] == len(pairs) < len(ver) + len(ent)
        for key in ("threshold", "target", "alpha", "coverage", "n", "min_kept"):
            assert got[key] == want[key], (stage, key)
        assert got["chosen_on"] == {k: split[k] for k in ("seed", "fraction")} | {
            "selection": 50,
            "certification": 50,
        }
    # kept: the sure verdicts (all agreeing); the lowest threshold that keeps no unsure one
    assert cert["verifiable"]["threshold"] == 0.63
    assert cert["verifiable"]["coverage"] == pytest.approx(
        sum(max(p, 1 - p) >= 0.63 for p, _ in ver_c) / len(ver_c)
    )
    toml = tomllib.loads(best.read_text())
    assert toml["escalation"]["labels"] == str(labels)
    assert toml["escalation"]["split"] == {
        "seed": 0,
        "fraction": 0.5,
        "selection": 50,
        "certification": 50,
    }
    assert toml["escalation"]["min_kept"] == 50
    assert "# chosen on 50 labelled responses, certified on 50 others" in best.read_text()
    assert toml["escalation"]["verifiable"] == {
        **{k: cert["verifiable"][k] for k in ("threshold", "target", "alpha", "coverage", "n")},
        "judge": "oracle",
    }
    # every measured judge's own thresholds, for `murgat score --escalate-to`: of its runs, the
    # one certified on the most verdicts
    judges = toml["escalation"]["judges"]
    for stage in ("verifiable", "entail"):
        own = block["certification"][stage]
        assert judges["oracle"][stage]["n"] == own["n"] > 0
        assert judges["oracle"][stage].get("threshold") == own["threshold"]
    assert load_config(best, {}).escalation.verifiable.threshold == 0.63
    # PPI: MURGAT-S over all responses, people's scores on the labelled half
    human = {
        v.id: v.scores for v in map(from_record, map(ScoreRecord.model_validate, recs.values()))
    }
    from murgat_local.meta.views import label_views

    people, _ = label_views(labels)
    ids = sorted(recs)
    for metric in ("murgat_s", "coverage", "f1"):
        f = [human[i][metric] for i in ids]
        h = [people[i].scores[metric] if i in people else None for i in ids]
        want = corrected_mean(f, h)
        got = block["ppi"][metric]
        assert got["judge_only"] == want["judge_only"] and got["human_only"] == want["human_only"]
        est, low, high = ppi_mean(
            [h[k] for k in range(len(ids)) if h[k] is not None],
            [f[k] for k in range(len(ids)) if h[k] is not None],
            [f[k] for k in range(len(ids)) if h[k] is None],
        )
        assert got["ppi"]["mean"] == est and got["ppi"]["ci"] == [low, high], metric
        assert (got["ppi"]["n"], got["ppi"]["n_unlabelled"]) == (len(labelled), len(ids) // 2)
    assert block["ppi"]["labelled"] == len(labelled) and block["ppi"]["responses"] == len(recs)
    assert block["ppi"]["sampling"] == {
        "random": True,
        "seed": 7,
        "labelled": len(labelled),
        "note": None,
    }
    assert "certified verifiable (oracle): threshold 0.630" in res.output
    # `murgat report --meta-eval` shows the diagrams
    page = tmp_path / "report.html"
    res = CliRunner().invoke(
        app, ["report", str(folder), "--out", str(page), "--meta-eval", str(out)]
    )
    assert res.exit_code == 0, res.output
    html = page.read_text()
    assert "<h2>Judge calibration</h2>" in html
    assert html.count('class="plot reliability"') == 6  # two runs, three stages


def test_too_few_labels_certify_nothing_and_best_toml_says_so(run, tmp_path):
    tmp, records = run
    recs, truth = _with_p_yes(records, TRUTH, 1)  # 14 sentences: fewer than any test needs
    folder = _run_folder(tmp / "judge", tmp_path / "small", recs)
    labels = write(tmp_path / "labels.jsonl", labels_from(recs, truth))
    best = tmp_path / "best.toml"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(folder),
            "--human",
            str(labels),
            "--out",
            str(tmp_path / "meta"),
            "--resamples",
            "100",
            "--certify",
            "0.9",
            "--select",
            str(best),
        ],
    )
    assert res.exit_code == 0, res.output
    c = json.loads((tmp_path / "meta" / "meta_eval.json").read_text())["certification"]
    assert c["verifiable"]["threshold"] is None and c["verifiable"]["coverage"] == 0.0
    assert "no threshold keeps enough verdicts" in c["verifiable"]["note"]
    esc = tomllib.loads(best.read_text())["escalation"]
    assert "threshold" not in esc["verifiable"] and esc["verifiable"]["coverage"] == 0.0
    assert load_config(best, {}).escalation.verifiable.threshold is None
    # one run: nothing chosen, every label certifies, and it says so
    assert "split" not in esc and "one run: nothing is chosen" in res.output
    assert "# one run: nothing chosen, certified on all 5 labelled responses" in best.read_text()
    # labels in file order (no `order` recorded): no PPI estimate, and why
    ppi = json.loads((tmp_path / "meta" / "meta_eval.json").read_text())["runs"]["small"]["ppi"]
    assert ppi["sampling"]["random"] is False
    for metric in ("murgat_s", "coverage", "f1"):
        assert ppi[metric]["ppi"]["mean"] is None and ppi[metric]["ppi"]["ci"] is None
        assert (
            "no PPI estimate: 5 of 5 labelled responses record no random"
            in (ppi[metric]["ppi"]["note"])
        )
        assert ppi[metric]["human_only"]["mean"] is not None  # the plain means stay
    assert "no PPI estimate: 5 of 5 labelled responses" in res.output


def test_bad_certify_arguments_and_escalation_tables_are_refused(tmp_path):
    res = CliRunner().invoke(
        app,
        ["meta-eval", str(tmp_path), "--human", "x", "--out", str(tmp_path), "--certify", "90"],
    )
    assert res.exit_code != 0 and "--certify" in res.output
    ok = {"threshold": 0.9, "target": 0.9, "alpha": 0.1, "coverage": 0.5, "n": 30}
    EscalationConfig.model_validate({"entail": ok})
    for bad in (
        {"entail": {**ok, "threshold": 0.3}},  # below 0.5 a verdict is the other answer
        {"entail": {**ok, "coverage": 1.2}},
        {"decompose": ok},  # not a yes/no stage
        {"entail": {**ok, "extra": 1}},
    ):
        with pytest.raises(ValueError):
            EscalationConfig.model_validate(bad)
