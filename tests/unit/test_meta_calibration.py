"""`murgat meta-eval`'s calibration, certification and PPI blocks: an oracle run's records with a
`p_yes` beside each yes/no verdict (as `murgat score` records it), measured against labels, each
block checked against the pure functions in `metrics` on pairs read by hand; best.toml's
`[escalation]` read back by `murgat score`'s configuration; the diagrams in `murgat report`."""

from __future__ import annotations

import copy
import json
import shutil
import tomllib

import pytest
from support.meta_runs import TRUTH, labels_from, oracle_meta_run, write
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import load_config
from murgat_local.meta.views import from_record, p_yes, precise_p_yes
from murgat_local.metrics.calibration import calibration
from murgat_local.metrics.certify import certify
from murgat_local.metrics.ppi import corrected_mean
from murgat_local.panel_config import EscalationConfig


@pytest.fixture(scope="module")
def run(tmp_path_factory, media_root):
    return oracle_meta_run(tmp_path_factory, media_root)


COPIES = 12  # the five responses, repeated under new ids: 168 sentences, enough to certify


def _confidence(value: bool, agrees: bool) -> float:
    """A judge sure where it agrees with people and unsure where it does not."""
    c = 0.96 if agrees else 0.62
    return c if value else 1 - c


def _with_p_yes(records: dict, truth: dict, copies: int) -> tuple[dict, dict]:
    """The records, repeated `copies` times, with p_yes on every verifiable and joint verdict."""
    out, labels = {}, {}
    for k in range(copies):
        for rid, rec in records.items():
            new = copy.deepcopy(rec)
            new["id"] = f"{rid}-{k}"
            for s, (verifiable, facts) in zip(new["trace"]["sentences"], truth[rid]):
                v = s["verifiable"]
                v["p_yes"] = _confidence(v["value"], v["value"] == verifiable)
                for f, t in zip(s.get("facts") or [], facts or []):
                    f["joint"]["p_yes"] = _confidence(
                        f["joint"]["value"], f["joint"]["value"] == t[0]
                    )
                for f in s.get("facts") or []:  # the precision judgements: sure of everything
                    for v in [*f["alone"].values(), *f["without"].values()]:
                        v["p_yes"] = 0.9 if v["value"] else 0.1
            out[new["id"]] = new
            labels[new["id"]] = truth[rid]
    return out, labels


def _run_folder(src, dst, records: dict):
    dst.mkdir()
    shutil.copy(src / "summary.json", dst / "summary.json")
    (dst / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records.values()))
    return dst


def _pairs(records: dict, labels: dict):
    """(p_yes, human) per stage, read from the records by hand, responses in id order."""
    ver, ent = [], []
    for rid, sents in sorted(labels.items()):
        for s, (verifiable, facts) in zip(records[rid]["trace"]["sentences"], sents):
            ver.append((s["verifiable"]["p_yes"], verifiable))
            for f, t in zip(s.get("facts") or [], facts or []):
                ent.append((f["joint"]["p_yes"], t[0]))
    return ver, ent


def test_p_yes_is_read_through_one_accessor_and_older_records_have_none():
    assert p_yes({"value": True, "p_yes": 0.83}) == 0.83
    for judgement in ({"value": True}, {"value": True, "p_yes": None}, None, {"p_yes": "0.8"}):
        assert p_yes(judgement) is None
    assert p_yes({"p_yes": 1.5}) is None and p_yes({"p_yes": float("nan")}) is None
    # precise given entailed: alone yes or else the others without it no
    fact = {
        "alone": {"0": {"value": True, "p_yes": 0.9}, "1": {"value": False, "p_yes": 0.2}},
        "without": {"1": {"value": False, "p_yes": 0.3}},
    }
    probs, judged = precise_p_yes(fact, [True, True, False])
    assert probs[0] == 0.9 and probs[1] == pytest.approx(0.2 + 0.8 * 0.7) and probs[2] is None
    assert judged == (True, True, False)
    assert precise_p_yes({"alone": {}}, [True]) == ((None,), (False,))  # the rule decides


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
    labels = write(tmp_path / "labels.jsonl", labels_from(recs, labelled))
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
    want = calibration([0.9, 0.19] * 6, [True, False] * 6, n_resamples=200, seed=0)
    assert (precise["n"], precise["missing_p_yes"]) == (12, 0)
    assert precise["ece"] == pytest.approx(want["ece"]) and precise["auroc"] == 1.0
    # the older run: every pair counted, none measured, and said why
    old = report["runs"]["older"]["calibration"]["verifiable"]
    assert old["n"] == 0 and old["missing_p_yes"] == len(ver) and old["ece"] is None
    assert "none of the" in old["notes"]["p_yes"]
    # certification of the selected combination: what best.toml carries for `murgat score`
    cert = report["certification"]
    for stage, pairs in (("verifiable", ver), ("entail", ent)):
        want = certify(*zip(*pairs), target=0.9, alpha=0.1)
        got = cert[stage]
        assert got["judge"] == "oracle"
        for key in ("threshold", "target", "alpha", "coverage", "n"):
            assert got[key] == want[key], (stage, key)
    # kept: the sure verdicts (all agreeing); the lowest threshold that keeps no unsure one
    assert cert["verifiable"]["threshold"] == 0.63
    assert cert["verifiable"]["coverage"] == pytest.approx(
        sum(max(p, 1 - p) >= 0.63 for p, _ in ver) / len(ver)
    )
    toml = tomllib.loads(best.read_text())
    assert toml["escalation"]["labels"] == str(labels)
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
    human = {v.id: v.scores for v in map(from_record, recs.values())}
    from murgat_local.meta.views import label_views

    people, _ = label_views(labels)
    ids = sorted(recs)
    for metric in ("murgat_s", "coverage", "f1"):
        want = corrected_mean(
            [human[i][metric] for i in ids],
            [people[i].scores[metric] if i in people else None for i in ids],
        )
        assert block["ppi"][metric] == want, metric
    assert block["ppi"]["labelled"] == len(labelled) and block["ppi"]["responses"] == len(recs)
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
    esc = tomllib.loads(best.read_text())["escalation"]["verifiable"]
    assert "threshold" not in esc and esc["coverage"] == 0.0  # no threshold: all escalated
    assert load_config(best, {}).escalation.verifiable.threshold is None


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
