"""`murgat meta-eval --select`: each stage's best judge (a run's, or a panel of runs' judges),
written as a config that `murgat score --config` runs as it is. The judges are human label
files with known mistakes, so every statistic is known by hand (the runs: `select_runs` in
tests/unit/conftest.py; what a run folder may not put into best.toml: test_select_hostile.py)."""

from __future__ import annotations

import copy
import tomllib

import pytest
from support.select_runs import SCORES, _meta, _records
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig, load_config
from murgat_local.judges.panel import Rule, reliability_weight
from murgat_local.meta.combine import combine, panel, single
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.results import ScoreRecord


def test_combining_recorded_verdicts_by_hand(select_runs):
    tmp, *_ = select_runs
    raw = {n: _records(tmp / n)["h01"] for n in ("j1", "j2", "j3")}
    recs = {n: ScoreRecord.model_validate(r) for n, r in raw.items()}
    models = {n: f"human:{tmp / n}.jsonl" for n in recs}
    rule = Rule("majority")
    trio = panel([(models[n], n) for n in ("j1", "j2", "j3")], rule)
    rec = combine(recs, trio, "j1", trio)
    assert isinstance(rec, ScoreRecord) and rec.trace is not None
    sents = rec.trace.sentences
    # "A tone plays.": j1 says NO, outvoted.
    verifiable = sents[2].verifiable
    assert verifiable is not None and verifiable.panel is not None
    assert verifiable.value is True and verifiable.panel.no == 1
    # "The screen is red.": j1 says not entailed, outvoted; precision 1/2 as the labels say.
    joint = sents[0].facts[0].joint
    assert joint is not None and joint.value is True
    truth_rec = _records(tmp / "perfect")["h01"]
    assert [getattr(rec, k) for k in SCORES] == [truth_rec[k] for k in SCORES]
    # j1's verdicts alone, by its run: its own scores back.
    alone = combine(recs, single(models["j1"], "j1"), "j1", single(models["j1"], "j1"))
    assert isinstance(alone, ScoreRecord)
    assert [getattr(alone, k) for k in SCORES] == [raw["j1"][k] for k in SCORES]
    # A sentence the decomposer's run never decomposed (its verifier said no) is unscored when
    # another verifier finds it verifiable: its facts are not guessed.
    said_no = copy.deepcopy(raw["j1"])
    first = said_no["trace"]["sentences"][0]
    first["verifiable"]["value"] = False
    del first["decomposition"], first["facts"]
    mixed = combine(
        {**recs, "j1": ScoreRecord.model_validate(said_no)},
        single(models["j2"], "j2"),
        "j1",
        single(models["j1"], "j1"),
    )
    assert isinstance(mixed, ScoreRecord) and mixed.trace is not None
    red = mixed.trace.sentences[0]
    assert red.verifiable is not None and red.verifiable.value is True
    assert red.decomposition is not None and "not decomposed in run j1" in (
        red.decomposition.error or ""
    )
    assert red.facts == [] and mixed.scored_fraction is not None and mixed.scored_fraction < 1


def test_the_judge_that_agrees_perfectly_is_selected(select_runs):
    tmp, truth, _, judges = select_runs
    report, res = _meta(
        tmp, truth, ["j1", "j2", "j3", "perfect"], "--select", str(tmp / "perfect.toml")
    )
    stages = report["selection"]["stages"]
    for stage in ("verifiable", "decompose", "entail"):
        assert stages[stage]["model"] == judges["perfect"] and stages[stage]["vote"] is None
        assert stages[stage]["value"] == 1.0
    combo = report["selection"]["combination"]["murgat_s"]
    assert combo["pearson"] == pytest.approx(1.0) and combo["spearman"] == pytest.approx(1.0)
    config = tomllib.loads((tmp / "perfect.toml").read_text())
    assert config["verifier"] == config["decomposer"] == config["entailer"] == judges["perfect"]
    assert "panel" not in config
    assert "selected:" in res.output and "Judge per stage" in res.output


def test_a_panel_that_outvotes_each_members_mistakes_is_selected_and_runs_as_written(
    select_runs, media_root
):
    tmp, truth, responses, judges = select_runs
    best = tmp / "best.toml"
    report, _ = _meta(tmp, truth, ["j1", "j2", "j3"], "--select", str(best))
    stages = report["selection"]["stages"]
    j1, j2, j3 = judges["j1"], judges["j2"], judges["j3"]
    # Subtask 1 by hand: j1 misses one of 5 verifiable sentences (0.9), j2 and j3 call one of 3
    # others verifiable (5/6); their majority makes no mistake.
    singles = {r["model"]: r["value"] for r in stages["verifiable"]["singles"]}
    assert singles == {j1: pytest.approx(0.9), j2: pytest.approx(5 / 6), j3: pytest.approx(5 / 6)}
    assert (
        stages["verifiable"]["model"] == f"panel:{j1},{j2},{j3}"
        and stages["verifiable"]["vote"] == "majority"
    )
    # Subtask 3: j2 calls the one unentailed fact entailed (0.5); j1 and j3 each miss another of
    # the 5 entailed ones (0.9), so "any" of the two makes no mistake, with fewer members than
    # the majority of three that ties with it.
    singles = {r["model"]: r["value"] for r in stages["entail"]["singles"]}
    assert singles == {j1: pytest.approx(0.9), j2: pytest.approx(0.5), j3: pytest.approx(0.9)}
    assert stages["entail"]["model"] == f"panel:{j1},{j3}" and stages["entail"]["vote"] == "any"
    assert stages["entail"]["value"] == 1.0
    assert {(r["model"], r["vote"]) for r in stages["entail"]["ranking"] if r["value"] == 1.0} >= {
        (f"panel:{j1},{j3}", "any"),
        (f"panel:{j1},{j3},{j2}", "majority"),
    }
    assert stages["decompose"]["vote"] is None and stages["decompose"]["value"] == 1.0
    assert report["selection"]["combination"]["murgat_s"]["pearson"] == pytest.approx(1.0)
    config = load_config(best, {})
    assert (
        config.verifier == stages["verifiable"]["model"]
        and config.panel.verifiable.vote == "majority"
    )
    # The configuration runs as it is, and its panels give the people's scores.
    out = tmp / "scored-best"
    res = CliRunner().invoke(
        app,
        [
            "score",
            str(responses),
            "--media-root",
            str(media_root),
            "--out",
            str(out),
            "--config",
            str(best),
        ],
    )
    assert res.exit_code == 0, res.output
    scored, people = _records(out), _records(tmp / "perfect")
    for rid in people:
        assert [scored[rid][k] for k in SCORES] == [people[rid][k] for k in SCORES], rid


def test_weights_from_a_meta_eval_report(select_runs, media_root):
    tmp, truth, responses, judges = select_runs
    _meta(tmp, truth, ["j1", "j2", "j3"])
    report = tmp / "meta-j1-j2-j3" / "meta_eval.json"
    panel_model = f"panel:{judges['j1']},{judges['j2']},{judges['j3']}"
    cfg = RunConfig(
        judge=judges["j1"],
        entailer=panel_model,
        panel={"entail": {"vote": "weighted", "weights_from": str(report)}},
    )
    ((members, rule),) = cfg.panel_rules().values()
    assert dict(rule.weights) == pytest.approx(
        {
            judges["j1"]: reliability_weight(0.9),
            judges["j2"]: 0.0,
            judges["j3"]: reliability_weight(0.9),
        }
    )
    runner = Runner(cfg, media_root, tmp / "weighted", summary=RunSummary)
    try:
        result = runner.run(responses)
    finally:
        runner.close()
    detail = result.summary.provenance.judges["entail"].detail
    assert (
        detail["weights_from"]["path"] == str(report.resolve())
        and len(detail["weights_from"]["sha256"]) == 64
    )
    assert detail["weights"] == pytest.approx(dict(rule.weights))
