"""Human labels as a judge (`human:PATH`): the human MURGAT-S, stage mixes, the CLI, labels per
response, calls keyed by item. (What is refused: test_human_labels_refused.py.)"""

from __future__ import annotations

import json

import pytest
from support.fakes import OracleEngine
from support.human_labels import BY_HAND, LABELS, RESPONSES, _f1, _write
from support.human_runs import _run
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.judges.human import HumanLabels


def test_the_human_engine_gives_the_human_murgat_s(tmp_path, media_root):
    result, recs = _run(tmp_path, media_root)
    assert result.exit_code == 0 and result.summary.judge_calls.failed == 0
    assert result.summary.segments_decoded == 0  # the labels need no media: nothing is cut
    for rid, (cov, p, r) in BY_HAND.items():
        rec = recs[rid]
        assert rec["status"] == "ok"
        assert rec["coverage"] == pytest.approx(cov)
        assert rec["precision"] == pytest.approx(p)
        assert rec["recall"] == pytest.approx(r)
        assert rec["murgat_s"] == pytest.approx(cov * _f1(p, r))
    assert recs["h01"]["murgat_s"] == pytest.approx(8 / 21)
    assert recs["h03"]["murgat_s"] == pytest.approx(0.5)
    assert recs["h04"]["murgat_s"] is None and recs["h04"]["note"] == "no verifiable sentence"
    # The two-citation sentence: the second citation is the one found not precise.
    first = recs["h01"]["trace"]["sentences"][0]
    assert first["facts"][0]["precise"] == [True, False]
    # Each fact's per-citation judgments follow its labels.
    h03 = recs["h03"]["trace"]["sentences"][0]["facts"]
    assert [f["precise"] for f in h03] == [[False, False, False], [True, True, False]]
    # Provenance and the summary name the labels.
    judges = result.summary.provenance.judges
    assert judges["entail"].engine == "human"
    assert judges["entail"].identity.startswith("human-labels/2:")
    assert judges["entail"].detail["sha256"] in judges["entail"].identity
    assert result.summary.murgat_s == pytest.approx((8 / 21 + 1 + 0.5) / 3)
    # A rerun is served from the cache, keyed per response.
    again, recs2 = _run(tmp_path, media_root)
    assert all(s.model_calls == 0 for s in again.summary.stages.values())
    assert recs2["h01"]["murgat_s"] == recs["h01"]["murgat_s"]
    # A person's label is certain: p_yes is 1 for YES and 0 for NO, and the cache returns it.
    seen = 0
    for rid in recs:
        pairs = zip(recs[rid]["trace"]["sentences"], recs2[rid]["trace"]["sentences"])
        for s, s2 in pairs:
            v = s.get("verifiable")
            if isinstance(v, dict) and isinstance(v.get("value"), bool):
                assert v["p_yes"] == float(v["value"]) == s2["verifiable"]["p_yes"]
                seen += 1
    assert seen


def test_stage_mix_human_verifier_and_decomposer_model_entailer(tmp_path, media_root):
    oracle = OracleEngine()
    lab = _write(tmp_path / "labels.jsonl", LABELS)
    result, recs = _run(
        tmp_path,
        media_root,
        engines={"oracle": oracle},
        judge="oracle",
        verifier=f"human:{lab}",
        decomposer=f"human:{lab}",
    )
    assert all(recs[i]["status"] == "ok" for i in ("h01", "h02", "h03", "h04"))
    # The model saw only entail questions, about the human facts.
    claims = {r.prompt.split("<<<CLAIM\n")[1].split("\nCLAIM>>>")[0] for r in oracle.seen}
    assert all("<<<CLAIM" in r.prompt for r in oracle.seen)
    assert claims == {
        "The screen is red.",
        "The screen turns green.",
        "The screen is bright.",
        "The screen is blue.",
        "The screen shows a colour.",
        "The colour changes.",
    }
    # Verifiability and facts are the labels'.
    s = recs["h01"]["trace"]["sentences"]
    assert [x["verifiable"]["value"] for x in s] == [True, True, True, False]
    assert s[1]["decomposition"]["value"]["facts"] == [
        "The screen turns green.",
        "The screen is bright.",
    ]
    # The oracle sees red at 0:00 only: the same judgment as the humans' on h01's first sentence.
    assert s[0]["facts"][0]["precise"] == [True, False]
    assert recs["h02"]["murgat_s"] == 1.0


def test_cli_score_with_human_labels(tmp_path, media_root):
    lab = _write(tmp_path / "labels.jsonl", LABELS)
    resp = _write(tmp_path / "r.jsonl", RESPONSES)
    out = tmp_path / "out"
    cli = CliRunner()
    r = cli.invoke(
        app,
        [
            "score",
            str(resp),
            "--media-root",
            str(media_root),
            "--out",
            str(out),
            "--judge",
            f"human:{lab}",
        ],
    )
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["murgat_s"] == pytest.approx((8 / 21 + 1 + 0.5) / 3)
    assert summary["models"]["entail"] == f"human:{lab}"
    r = cli.invoke(
        app,
        [
            "score",
            str(resp),
            "--media-root",
            str(media_root),
            "--out",
            str(out),
            "--judge",
            f"human:{lab}",
            "--dry-run",
        ],
    )
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output[r.output.index("{") :])
    assert plan["complete"] and all(
        plan[s]["to_run"] == 0 for s in ("verifiable", "decompose", "entail")
    )
    r = cli.invoke(
        app,
        [
            "score",
            str(resp),
            "--media-root",
            str(media_root),
            "--out",
            str(out),
            "--judge",
            f"human:{tmp_path / 'none.jsonl'}",
        ],
    )
    assert r.exit_code == 2 and "do not exist" in " ".join(r.output.split())


def test_two_responses_with_the_same_sentence_get_their_own_labels(tmp_path, media_root):
    text = "The screen is red (visual, 0:00; visual, 0:01)."
    responses = [
        {"id": i, "video": "colors", "model_generation": text + "\nAnswer: A"} for i in ("x", "y")
    ]
    labels = [
        {
            "id": "x",
            "sentences": [
                {
                    "text": text,
                    "verifiable": True,
                    "facts": [
                        {"text": "The screen is red.", "entailed": True, "precise": [True, True]}
                    ],
                }
            ],
        },
        {
            "id": "y",
            "sentences": [
                {
                    "text": text,
                    "verifiable": True,
                    "facts": [
                        {"text": "The screen is red.", "entailed": True, "precise": [False, True]}
                    ],
                }
            ],
        },
    ]
    result, recs = _run(tmp_path, media_root, responses=responses, labels=labels)
    assert (recs["x"]["precision"], recs["y"]["precision"]) == (1.0, 0.5)
    assert result.exit_code == 0


def test_only_a_per_item_engine_keys_calls_by_item(tmp_path):
    from murgat_local.judges import load_prompt
    from murgat_local.judges.calls import Call
    from murgat_local.pipeline.cache import VerdictCache
    from murgat_local.pipeline.judging import StageJudge

    tpl = load_prompt("verifiable")
    a, b = (Call(tpl, tpl.render(sentence="Red."), item=i) for i in ("a", "b"))
    assert a.material("verifiable", "j") == Call(tpl, tpl.render(sentence="Red.")).material(
        "verifiable", "j"
    )
    cache = VerdictCache(tmp_path / "c.sqlite")
    try:
        plain = StageJudge("verifiable", OracleEngine(), cache)
        assert plain.keys([a])[0] == plain.keys([b])[0]
        human = StageJudge("verifiable", HumanLabels(_write(tmp_path / "l.jsonl", LABELS)), cache)
        assert human.keys([a])[0] != human.keys([b])[0]
    finally:
        cache.close()
