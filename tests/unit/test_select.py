"""`murgat meta-eval --select`: each stage's best judge (a run's, or a panel of runs' judges),
written as a config that `murgat score --config` runs as it is. The judges are human label
files with known mistakes, so every statistic is known by hand."""

from __future__ import annotations

import copy
import json
import tomllib

import pytest
from support.human_labels import LABELS, RESPONSES
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig, load_config
from murgat_local.judges.panel import Rule, reliability_weight
from murgat_local.meta.combine import combine, panel, single
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner

SCORES = ("coverage", "precision", "recall", "f1", "murgat_s")
# Each judge gets one uncited sentence's verifiability and one fact's entailment wrong, never the
# same ones: any two of them outvote the third everywhere.
MISTAKES = {
    "j1": ("A tone plays.", "The screen is red."),
    "j2": ("Therefore A.", "The screen is bright."),
    "j3": ("So the answer is C.", "The screen is blue."),
}


def _with_mistakes(sentence_text: str, fact_text: str) -> list[dict]:
    rows = copy.deepcopy(LABELS)
    for line in rows:
        for s in line["sentences"]:
            if s["text"] == sentence_text:
                s["verifiable"] = not s["verifiable"]
            for f in s.get("facts", []):
                if f["text"] == fact_text:
                    f["entailed"] = not f["entailed"]
                    if f["entailed"]:
                        f["precise"] = [True] * s["text"].count("visual")
                    else:
                        f.pop("precise", None)
    return rows


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory, media_root):
    tmp = tmp_path_factory.mktemp("select")
    truth = _write(tmp / "truth.jsonl", LABELS)
    responses = _write(tmp / "r.jsonl", RESPONSES)
    judges = {
        name: f"human:{_write(tmp / f'{name}.jsonl', _with_mistakes(*m))}"
        for name, m in MISTAKES.items()
    }
    judges["perfect"] = (
        f"human:{_write(tmp / 'perfect.jsonl', [dict(l, annotator='copy') for l in LABELS])}"
    )
    for name, model in judges.items():
        runner = Runner(
            RunConfig(judge=model, bootstrap_resamples=0),
            media_root,
            tmp / name,
            summary=RunSummary,
        )
        try:
            assert runner.run(responses).exit_code == 0
        finally:
            runner.close()
    return tmp, truth, responses, judges


def _records(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "scores.jsonl").read_text().splitlines())}


def _meta(tmp, truth, names, *extra):
    out = tmp / ("meta-" + "-".join(names))
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            *[str(tmp / n) for n in names],
            "--human",
            str(truth),
            "--out",
            str(out),
            "--resamples",
            "200",
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads((out / "meta_eval.json").read_text()), res


def test_combining_recorded_verdicts_by_hand(runs):
    tmp, *_ = runs
    recs = {n: _records(tmp / n)["h01"] for n in ("j1", "j2", "j3")}
    models = {n: f"human:{tmp / n}.jsonl" for n in recs}
    rule = Rule("majority")
    trio = panel([(models[n], n) for n in ("j1", "j2", "j3")], rule)
    rec = combine(recs, trio, "j1", trio)
    sents = rec["trace"]["sentences"]
    # "A tone plays.": j1 says NO, outvoted.
    assert sents[2]["verifiable"]["value"] is True and sents[2]["verifiable"]["panel"]["no"] == 1
    # "The screen is red.": j1 says not entailed, outvoted; precision 1/2 as the labels say.
    assert sents[0]["facts"][0]["joint"]["value"] is True
    truth_rec = _records(tmp / "perfect")["h01"]
    assert [rec[k] for k in SCORES] == [truth_rec[k] for k in SCORES]
    # j1's verdicts alone, by its run: its own scores back.
    alone = combine(recs, single(models["j1"], "j1"), "j1", single(models["j1"], "j1"))
    assert [alone[k] for k in SCORES] == [recs["j1"][k] for k in SCORES]
    # A sentence the decomposer's run never decomposed (its verifier said no) is unscored when
    # another verifier finds it verifiable: its facts are not guessed.
    said_no = copy.deepcopy(recs["j1"])
    first = said_no["trace"]["sentences"][0]
    first["verifiable"]["value"] = False
    del first["decomposition"], first["facts"]
    mixed = combine(
        {**recs, "j1": said_no}, single(models["j2"], "j2"), "j1", single(models["j1"], "j1")
    )
    red = mixed["trace"]["sentences"][0]
    assert (
        red["verifiable"]["value"] is True
        and "not decomposed in run j1" in red["decomposition"]["error"]
    )
    assert red["facts"] == [] and mixed["scored_fraction"] < 1


def test_the_judge_that_agrees_perfectly_is_selected(runs):
    tmp, truth, _, judges = runs
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
    runs, media_root
):
    tmp, truth, responses, judges = runs
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


def test_weights_from_a_meta_eval_report(runs, media_root):
    tmp, truth, responses, judges = runs
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
    detail = result.summary["provenance"]["judges"]["entail"]["detail"]
    assert (
        detail["weights_from"]["path"] == str(report.resolve())
        and len(detail["weights_from"]["sha256"]) == 64
    )
    assert detail["weights"] == pytest.approx(dict(rule.weights))


# What a run folder from someone else may hold: where to read from, which server and key to use,
# where engines and weights are. None of it may reach best.toml. The server named is a loopback
# address's port 9, so that a regression sends nothing off this machine either.
HOSTILE = {
    "allow_outside": ["/"],
    "models_dir": "/srv/theirs/models",
    "cache": "/srv/theirs/cache.sqlite",
    "engine": "openai",
    "data_parallel": 4,
    "ray": {"address": "ray://127.0.0.9:10001"},
    "server": {
        "base_url": "http://127.0.0.9:9/v1",
        "api_key_env": "THEIR_KEY_ENV",
        "served_model": "theirs",
    },
    "stage_engines": {
        "entail": {
            "engine": "openai",
            "base_url": "http://127.0.0.9:9/v1",
            "api_key_env": "THEIR_KEY_ENV",
        }
    },
    "engine_args": {"trust_remote_code": True, "download_dir": "/srv/theirs/dl"},
    "bootstrap_resamples": 10**9,
    "max_failed_calls": 1.0,
    "chunk_size": 1,
    "batch_size": 1,
    "number_tolerance": 1.0,
    "group_by": ["model"],
    "limit": 1,
    "unknown_setting": "x",
}
# What changes a verdict does come from the decomposer's run: it is what was measured.
MEASURED = {
    "sampling": {"temperature": 0.0, "seed": 7},
    "media": {
        "fps": 1.0,
        "max_frames": 16,
        "max_side": 224,
        "audio_point_window": 2.0,
        "duration_tolerance": 0.5,
    },
}


def _hostile_run(tmp, name, **media):
    import shutil

    folder = tmp / name
    shutil.copytree(tmp / "perfect", folder)
    summary = json.loads((folder / "summary.json").read_text())
    config = summary["provenance"]["config"]
    config.update(copy.deepcopy(HOSTILE))
    config["media"] = {
        **config["media"],
        **MEASURED["media"],
        "max_open_videos": 999,
        "max_segment_mb": 1e6,
    }
    config["sampling"] = {**config["sampling"], **MEASURED["sampling"], "top_p": 0.1}
    config["panel"] = {
        **config["panel"],
        "weights_from": "/etc/passwd",
        "engines": {"x": {"engine": "openai", "base_url": "http://127.0.0.9:9/v1"}},
    }
    config["media"].update(media)
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_a_run_folder_cannot_put_paths_servers_or_engines_into_best_toml(runs, media_root):
    tmp, truth, responses, judges = runs
    _hostile_run(tmp, "hostile")
    best = tmp / "hostile.toml"
    _meta(tmp, truth, ["hostile"], "--select", str(best))
    text = best.read_text()
    for trace in (
        "127.0.0.9",
        "THEIR_KEY_ENV",
        "/srv/theirs",
        "trust_remote_code",
        "/etc/passwd",
        "openai",
        "10000000",
        "unknown_setting",
        "max_open_videos",
        "top_p",
    ):
        assert trace not in text, trace
    written = tomllib.loads(text)
    # (compat is None, the default, which TOML leaves out)
    assert set(written) == {
        "judge",
        "verifier",
        "decomposer",
        "entailer",
        "decontextualize",
        "parse_reasoning",
        "sampling",
        "media",
    }
    assert written["media"] == MEASURED["media"] and written["sampling"] == MEASURED["sampling"]
    # Loaded as `murgat score --config` loads it: every location is the default, the measured
    # settings are applied.
    config = load_config(best, {})
    default = RunConfig()
    for key in (
        "allow_outside",
        "models_dir",
        "cache",
        "engine",
        "data_parallel",
        "ray",
        "server",
        "stage_engines",
        "engine_args",
        "bootstrap_resamples",
        "max_failed_calls",
        "chunk_size",
        "batch_size",
        "number_tolerance",
        "group_by",
        "limit",
    ):
        assert getattr(config, key) == getattr(default, key), key
    assert config.panel == default.panel
    assert config.media.max_open_videos == default.media.max_open_videos and config.media.fps == 1.0
    assert config.sampling.seed == 7
    # And `murgat score` plans it on this machine's engines, the measured judges per stage.
    res = CliRunner().invoke(
        app,
        [
            "score",
            str(responses),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp / "hostile-dry"),
            "--config",
            str(best),
            "--dry-run",
        ],
    )
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout[res.stdout.index("{") :])
    for stage in ("decontext", "verifiable", "decompose", "entail"):
        assert plan[stage]["model"] == judges["perfect"]


def test_a_measured_setting_out_of_range_is_refused_naming_the_run(runs):
    tmp, truth, *_ = runs
    _hostile_run(tmp, "hostile-fps", fps=1e9)
    best = tmp / "hostile-fps.toml"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(tmp / "hostile-fps"),
            "--human",
            str(truth),
            "--out",
            str(tmp / "meta-hostile-fps"),
            "--resamples",
            "0",
            "--select",
            str(best),
        ],
    )
    assert res.exit_code == 1, res.output
    assert "hostile-fps" in res.output and "fps" in res.output and not best.exists()
