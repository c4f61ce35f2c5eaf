"""Judge panels (`panel:M1,M2,...`) in whole runs whose members are human label files with known
answers (a majority of a, b, a equals a): the rules on recorded verdicts, members added or
dropping out, self-grading warnings, the CLI, a member on its own engine. (The vote by hand:
test_panel_vote.py.)"""

from __future__ import annotations

import copy
import json

import pytest
from support.human_labels import LABELS, RESPONSES
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.judge_warnings import judge_warnings
from murgat_local.pipeline.runner import Runner

# ---------------------------------------------------------------- runs over human label files


def _flipped(labels):
    """Annotator b: every answer a gives that can flip without changing which sentences carry
    facts is flipped (uncited sentences' verifiability, every fact's entailment)."""
    out = copy.deepcopy(labels)
    for line in out:
        line["annotator"] = "b"
        for s in line["sentences"]:
            if "facts" not in s:
                s["verifiable"] = not s["verifiable"]
            for f in s.get("facts", []):
                f["entailed"] = not f["entailed"]
                if f["entailed"]:
                    f["precise"] = [True] * max(1, s["text"].count("visual"))
                else:
                    f.pop("precise", None)
    return out


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def labels(tmp_path):
    a = _write(tmp_path / "a.jsonl", LABELS)
    a2 = _write(
        tmp_path / "a2.jsonl", [dict(line, annotator="a2") for line in LABELS]
    )  # a's answers, its own file
    b = _write(tmp_path / "b.jsonl", _flipped(LABELS))
    return {"a": f"human:{a}", "a2": f"human:{a2}", "b": f"human:{b}"}


def _run(tmp_path, media_root, name, **cfg):
    cfg.setdefault("cache", tmp_path / "shared.sqlite")
    runner = Runner(RunConfig(**cfg), media_root, tmp_path / name, summary=RunSummary)
    try:
        result = runner.run(_write(tmp_path / "r.jsonl", RESPONSES))
    finally:
        runner.close()
    return result, {
        r["id"]: r for r in map(json.loads, result.records_path.read_text().splitlines())
    }


def _verdicts(rec):
    """Every yes/no verdict of a record, in order, with the sentence it belongs to."""
    for s in rec["trace"]["sentences"]:
        yield s["verifiable"]
        for f in s.get("facts", []):
            yield f["joint"]
            yield from f["alone"].values()
            yield from f["without"].values()


SCORES = ("coverage", "precision", "recall", "f1", "murgat_s")


def test_a_majority_of_a_b_a_is_a(tmp_path, media_root, labels):
    a, b, a2 = labels["a"], labels["b"], labels["a2"]
    _, alone = _run(tmp_path, media_root, "a", judge=a)
    _, flipped = _run(tmp_path, media_root, "b", judge=b, decomposer=a)
    panel = f"panel:{a},{b},{a2}"
    result, recs = _run(tmp_path, media_root, "panel", judge=a, verifier=panel, entailer=panel)
    assert result.exit_code == 0 and result.summary.judge_calls.failed == 0
    outvoted = 0
    for rid, rec in recs.items():
        assert [rec[k] for k in SCORES] == [alone[rid][k] for k in SCORES], rid
        for v in _verdicts(rec):
            members = v["panel"]["members"]
            assert set(members) == {a, b, a2}
            assert v["value"] == members[a]["value"] == members[a2]["value"]
            assert v["panel"]["yes"] + v["panel"]["no"] == 3 and not v["panel"]["tie"]
            outvoted += members[b]["value"] != v["value"]
    # b really disagrees with a, so the vote was tested, and b alone scores otherwise.
    assert outvoted >= 5
    assert any(flipped[rid]["murgat_s"] != alone[rid]["murgat_s"] for rid in alone)
    judges = result.summary.provenance.judges
    assert judges["entail"].engine == "panel" and judges["entail"].identity.startswith(
        "panel/1:majority:"
    )
    assert [m["model"] for m in judges["entail"].detail["members"]] == [a, b, a2]
    assert judges["entail"].detail["members"][0]["identity"].startswith("human-labels/2:")
    stages = result.summary.stages["verifiable"]
    assert set(stages.members) == {a, b, a2} and stages.votes == 8 and stages.ties == 0
    assert stages.unique == 3 * 8  # a panel's calls are its members' calls
    assert result.summary.warnings == []


@pytest.mark.parametrize(
    "vote_rule, expect",
    [
        ({"vote": "majority"}, lambda x, y: x and y),  # two members: a disagreement is a tie, NO
        ({"vote": "unanimous"}, lambda x, y: x and y),
        ({"vote": "any"}, lambda x, y: x or y),
        ({"vote": "weighted", "weights_by": {"a": 1.0, "b": 2.0}}, lambda x, y: y),
    ],
)
def test_each_vote_rule_on_recorded_verdicts(tmp_path, media_root, labels, vote_rule, expect):
    a, b = labels["a"], labels["b"]
    rule = dict(vote_rule)
    if "weights_by" in rule:
        rule["weights"] = {labels[k]: w for k, w in rule.pop("weights_by").items()}
    panel = f"panel:{a},{b}"
    result, recs = _run(
        tmp_path, media_root, "p", judge=a, verifier=panel, entailer=panel, panel=rule
    )
    assert result.exit_code == 0
    seen = ties = 0
    for rec in recs.values():
        for v in _verdicts(rec):
            m = v["panel"]["members"]
            assert v["value"] == expect(m[a]["value"], m[b]["value"])
            seen += 1
            ties += v["panel"]["tie"]
            if v["panel"]["tie"]:
                assert v["value"] is False and v["note"].startswith("tie (1 YES, 1 NO)")
    assert seen > 10
    if rule["vote"] == "majority":
        assert ties > 0 and result.summary.stages["verifiable"].ties > 0
        assert any("majority panel" in w and "2 members" in w for w in result.summary.warnings)
    else:
        assert ties == 0 and not any("majority panel" in w for w in result.summary.warnings)
        if rule["vote"] == "weighted":
            assert result.summary.provenance.judges["entail"].detail["weights"] == {
                a: 1.0,
                b: 2.0,
            }


def test_adding_a_member_runs_only_that_member(tmp_path, media_root, labels):
    a, b, a2 = labels["a"], labels["b"], labels["a2"]
    first, _ = _run(tmp_path, media_root, "two", judge=a, verifier=f"panel:{a},{b}")
    assert all(m.model_calls > 0 for m in first.summary.stages["verifiable"].members.values())
    plan_runner = Runner(
        RunConfig(judge=a, verifier=f"panel:{a},{b},{a2}", cache=tmp_path / "shared.sqlite"),
        media_root,
        tmp_path / "plan",
        summary=RunSummary,
    )
    try:
        plan = plan_runner.plan(tmp_path / "r.jsonl")
    finally:
        plan_runner.close()
    members = plan["verifiable"]["members"]
    assert (
        members[a]["to_run"] == members[b]["to_run"] == 0
        and members[a2]["to_run"] == members[a2]["calls"] == 8
    )
    assert plan["verifiable"]["calls"] == 24 and plan["verifiable"]["to_run"] == 8
    second, recs = _run(tmp_path, media_root, "three", judge=a, verifier=f"panel:{a},{b},{a2}")
    m = second.summary.stages["verifiable"].members
    assert m[a].model_calls == m[b].model_calls == 0 and m[a].cache_hits == m[b].cache_hits == 8
    assert m[a2].model_calls == 8 and m[a2].cache_hits == 0
    # With three members the majority is a's answer (a2 answers as a does).
    assert all(
        v["panel"]["members"][a]["value"] == v["value"]
        for r in recs.values()
        for v in (s["verifiable"] for s in r["trace"]["sentences"])
    )


def test_a_member_without_a_verdict_drops_out(tmp_path, media_root, labels):
    a = labels["a"]
    # c's facts are worded otherwise: asked about a's facts, c refuses every entailment question.
    c_rows = copy.deepcopy(LABELS)
    for line in c_rows:
        for s in line["sentences"]:
            for f in s.get("facts", []):
                f["text"] = "Reworded: " + f["text"]
    c = f"human:{_write(tmp_path / 'c.jsonl', c_rows)}"
    result, recs = _run(
        tmp_path, media_root, "drop", judge=a, entailer=f"panel:{a},{c}", max_failed_calls=1.0
    )
    _, alone = _run(tmp_path, media_root, "a", judge=a)
    for rid, rec in recs.items():
        assert [rec[k] for k in SCORES] == [alone[rid][k] for k in SCORES]
    joint = recs["h02"]["trace"]["sentences"][0]["facts"][0]["joint"]
    assert joint["value"] is True and joint["panel"]["dropped"] == 1 and joint["panel"]["yes"] == 1
    assert "is not a human fact" in joint["panel"]["members"][c]["error"]
    # The refusing member's calls count as failed calls of the run, as they would alone.
    calls = result.summary.judge_calls
    assert calls.failed == result.summary.stages["entail"].members[c].failed > 0
    # When every member drops out the panel decides nothing: the fact is unscored, never NO.
    result, recs = _run(
        tmp_path,
        media_root,
        "none",
        judge=a,
        entailer=f"panel:{c},{_c2(tmp_path, c_rows)}",
        max_failed_calls=1.0,
    )
    fact = recs["h02"]["trace"]["sentences"][0]["facts"][0]
    assert fact["joint"]["value"] is None and fact["joint"]["error"].startswith(
        "no panel member gave a verdict"
    )
    assert fact["unscored"] and recs["h02"]["murgat_s"] is None
    assert result.summary.stages["entail"].undecided > 0


def _c2(tmp_path, rows):
    return f"human:{_write(tmp_path / 'c2.jsonl', [dict(line, annotator='c2') for line in rows])}"


def test_a_member_whose_labels_do_not_fit_the_response_makes_it_an_error(
    tmp_path, media_root, labels
):
    rows = copy.deepcopy(LABELS)
    rows[1]["sentences"][1]["text"] = "So the answer is D."
    d = f"human:{_write(tmp_path / 'd.jsonl', rows)}"
    _, recs = _run(
        tmp_path, media_root, "misfit", judge=labels["a"], verifier=f"panel:{labels['a']},{d}"
    )
    assert recs["h02"]["status"] == "error" and recs["h02"]["error"].startswith(
        f"panel member {d}: sentence 2 differs"
    )
    assert recs["h01"]["status"] == "ok"


def test_self_grading_is_warned_from_the_preset_name_and_folder(tmp_path, media_root, labels):
    cfg = RunConfig(
        judge=labels["a"],
        verifier=f"panel:{labels['a']},smollm2-135m-instruct,{labels['b']}",
        entailer="tiny-qwen2.5-omni",
    )
    runner = Runner(
        cfg, media_root, tmp_path / "w", summary=RunSummary
    )  # no engine starts before a call needs it
    try:
        models = cfg.stage_models()
        responders = ["smollm2-135m-instruct/cite", "tiny-qwen3-omni/base"]
        warnings = judge_warnings(runner.judges, models, responders)
        assert warnings == [
            "self-grading: smollm2-135m-instruct judges verifiable (panel member) on the responses "
            "it wrote (smollm2-135m-instruct/cite)"
        ]
        # The weights' folder name (a hub-style org/name) is the same model too.
        folder = runner.judges["entail"].engine.preset.path.name
        assert judge_warnings(runner.judges, models, [f"org/{folder}"])[-1].startswith(
            "self-grading: tiny-qwen2.5-omni"
        )
        assert judge_warnings(runner.judges, models, ["someone-else"]) == []
    finally:
        runner.close()


def test_cli_panels_warn_once_and_refuse_a_decomposition_panel(tmp_path, media_root, labels):
    a, b = labels["a"], labels["b"]
    resp = _write(tmp_path / "r.jsonl", RESPONSES)
    cli = CliRunner()
    base = [
        "score",
        str(resp),
        "--media-root",
        str(media_root),
        "--out",
        str(tmp_path / "o"),
        "--judge",
        a,
    ]
    r = cli.invoke(app, [*base, "--verifier", f"panel:{a},{b}"])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("majority panel") == 1
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["models"]["verifiable"] == f"panel:{a},{b}" and len(summary["warnings"]) == 1
    r = cli.invoke(app, [*base, "--decomposer", f"panel:{a},{b}"])
    assert r.exit_code == 2 and "fact lists and rewrites are not voted on" in " ".join(
        r.output.split()
    )
    r = cli.invoke(app, [*base, "--verifier", f"panel:{a},{b}", "--dry-run"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout[r.stdout.index("{") :])
    assert set(plan["verifiable"]["members"]) == {a, b} and plan["verifiable"]["to_run"] == 0


def test_a_member_on_its_own_engine(tmp_path, media_root, labels):
    """`[panel.engines]`: one member served elsewhere (its own `vllm serve`), the others where
    the stage runs. Nothing is started here: engines start when a call needs them."""
    url = "http://127.0.0.1:9/v1"
    cfg = RunConfig(
        judge=labels["a"],
        verifier=f"panel:{labels['a']},smollm2-135m-instruct,tiny-gemma3",
        panel={"engines": {"smollm2-135m-instruct": {"engine": "openai", "base_url": url}}},
    )
    runner = Runner(cfg, media_root, tmp_path / "e", summary=RunSummary)
    try:
        human, smol, gemma = runner.judges["verifiable"].members
        assert smol.engine.kind == "openai" and smol.engine.options["base_url"] == url
        assert gemma.engine.kind == "vllm" and human.engine is runner.judges["decompose"].engine
        assert not any(j.engine.started for j in (smol, gemma))
    finally:
        runner.close()
    with pytest.raises(ValueError, match="a member of no panel"):
        RunConfig(judge=labels["a"], panel={"engines": {"tiny-gemma3": {"engine": "vllm"}}})
