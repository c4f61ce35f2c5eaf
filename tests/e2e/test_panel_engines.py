"""A judge panel of the real tiny engines (in-process vLLM): the random-weight Qwen3-Omni
thinker, the random-weight Gemma-3 and SmolLM2-135M, each on its own engine, their batches sent
concurrently. Their verdicts mean nothing; the vote, the cache and the drop-outs are real."""

from __future__ import annotations

import json

import pytest
from support.paths import ROOT, require_model

from murgat_local.config import RunConfig
from murgat_local.engines import close_all
from murgat_local.judges.panel import Rule, vote
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner

pytestmark = [pytest.mark.engine, pytest.mark.slow]

MEMBERS = ("tiny-qwen3-omni", "tiny-gemma3", "smollm2-135m-instruct")
PANEL = "panel:" + ",".join(MEMBERS)


# Own engines: the Runner builds them from the panel's config; kept across this module's runs.
@pytest.fixture(scope="module")
def engines():
    """One engine per model for the module's runs, started when a run first needs it."""
    for m in MEMBERS:
        require_model(m)
    shared: dict = {}
    yield shared
    close_all(shared.values())


def _responses(tmp_path):
    rows = [
        json.loads(line)
        for line in (ROOT / "samples" / "responses.jsonl").read_text().splitlines()[:3]
    ]
    rows[0]["model"] = (
        "tiny-gemma3/cite"  # as `murgat generate` names a responder: a judge grades itself
    )
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(cfg, media_root, out, responses, engines):
    runner = Runner(cfg, media_root, out, engines=engines, summary=RunSummary)
    try:
        result = runner.run(responses)
    finally:  # the engines outlive the run: the fixture closes them
        engines.update(runner.engines)
        runner.cutter.close()
        runner.cache.close()
    return result, [json.loads(line) for line in result.records_path.read_text().splitlines()]


def _panel_verdicts(recs):
    for rec in recs:
        for s in rec["trace"]["sentences"]:
            yield "verifiable", s["verifiable"]
            for f in s.get("facts", []):
                for v in [f["joint"], *f["alone"].values(), *f["without"].values()]:
                    yield "entail", v


def test_a_panel_of_three_tiny_engines(tmp_path, media_root, engines):
    responses = _responses(tmp_path)
    common = {
        "judge": "smollm2-135m-instruct",
        "decontextualize": False,
        "cache": tmp_path / "cache.sqlite",
        "max_failed_calls": 1.0,
        "bootstrap_resamples": 0,
    }
    # The Qwen thinker alone first: the panel then gets its verdicts from the cache.
    alone, alone_recs = _run(
        RunConfig(**common, verifier="tiny-qwen3-omni", entailer="tiny-qwen3-omni"),
        media_root,
        tmp_path / "alone",
        responses,
        engines,
    )
    assert alone.summary.stages["verifiable"].model_calls > 0
    cfg = RunConfig(**common, verifier=PANEL, entailer=PANEL, panel={"verifiable": {"vote": "any"}})
    result, recs = _run(cfg, media_root, tmp_path / "panel", responses, engines)
    assert all(r["status"] == "ok" for r in recs)
    members = result.summary.stages["verifiable"].members
    assert members["tiny-qwen3-omni"].model_calls == 0
    assert members["tiny-qwen3-omni"].cache_hits == alone.summary.stages["verifiable"].unique
    assert (
        members["tiny-gemma3"].model_calls > 0 and members["smollm2-135m-instruct"].model_calls > 0
    )
    # The Qwen member's verdicts are the ones it gave alone.
    for a, p in zip(alone_recs, recs):
        assert [s["verifiable"]["value"] for s in a["trace"]["sentences"]] == [
            s["verifiable"]["panel"]["members"]["tiny-qwen3-omni"]["value"]
            for s in p["trace"]["sentences"]
        ]
    rules = {"verifiable": Rule("any"), "entail": Rule("majority")}
    dropped_text_only = 0
    entail = 0
    for stage, v in _panel_verdicts(recs):
        m = v["panel"]["members"]
        assert set(m) == set(MEMBERS)
        t = vote(rules[stage], {n: x["value"] for n, x in m.items()})
        assert v["value"] == t.yes and v["panel"]["tie"] == t.tie, v
        if stage == "entail":
            entail += 1
            # SmolLM2 reads text only: shown the cited frames or sound, it is refused and drops out.
            if m["smollm2-135m-instruct"]["value"] is None:
                assert m["smollm2-135m-instruct"]["error"]
                dropped_text_only += 1
    assert entail > 0 and dropped_text_only == entail
    assert result.summary.stages["entail"].members["smollm2-135m-instruct"].errors > 0
    judges = result.summary.provenance.judges
    assert [m["identity"] for m in judges["entail"].detail["members"]] == [
        engines[m].identity for m in MEMBERS
    ]
    assert any(
        w.startswith(
            "self-grading: tiny-gemma3 judges verifiable (panel member), entail (panel member)"
        )
        for w in result.summary.warnings
    )
