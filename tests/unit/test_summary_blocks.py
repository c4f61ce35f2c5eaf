"""The blocks of summary.json, generation_summary.json and run_summary.json name every key
murgat writes: a panel's and a route's counters, the engines, the cache, the certification, the
provenance, the numbers per model and per group. Read back, the files keep no key as unknown and
write back the same text (the oracle judges run the protocol; no model)."""

from __future__ import annotations

import json

from support.fakes import OracleEngine
from support.named_keys import assert_read_whole, unnamed

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.results import Numbers, Summary
from murgat_local.results.summary_blocks import Counters, EngineUse

TEXT = (
    "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). "
    "The screen is red while a tone plays (visual, 0:00; audio, 0:00). So A.\nAnswer: A"
)


def _run(tmp_path, media_root):
    rows = [
        {"id": "r1", "video": "colors", "model": "m1", "benchmark": "b1", "model_generation": TEXT},
        {"id": "r2", "video": "colors", "model": "m2", "benchmark": "b2", "model_generation": TEXT},
        {"id": "r3", "video": "nowhere", "model": "m2", "model_generation": TEXT},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    engines = {
        "main": OracleEngine("main", ("text", "image", "video")),
        "eyes": OracleEngine("eyes", ("text", "image", "video"), salt="eyes"),
        "ears": OracleEngine("ears", ("text", "audio"), salt="ears"),
    }
    cfg = RunConfig(
        judge="main",
        verifier="panel:main,eyes,ears",
        entailer_visual="eyes",
        entailer_audio="ears",
        decontextualize=False,
        max_failed_calls=1.0,
        bootstrap_resamples=20,
        group_by=["benchmark"],
    )
    runner = Runner(cfg, media_root, tmp_path / "out", engines=engines, summary=RunSummary)
    try:
        return runner.run(path)
    finally:
        runner.close()


def test_a_score_run_summary_names_every_key_it_writes(tmp_path, media_root):
    result = _run(tmp_path, media_root)
    summary = assert_read_whole(result.summary_path, Summary)
    assert isinstance(summary, Summary)
    # the blocks are typed: a panel's members and a route's model are read as counters
    panel = (summary.stages or {})["verifiable"]
    assert isinstance(panel, Counters) and set(panel.members or {}) >= {"main", "eyes"}
    assert panel.votes is not None and panel.votes > 0
    routes = (summary.stages or {})["entail"].routes or {}
    assert {r: c.model for r, c in routes.items()} == {
        "visual": "eyes",
        "audio": "ears",
        "mixed": "main",
    }
    assert summary.entail_routes == {"visual": "eyes", "audio": "ears"}
    assert all(isinstance(e, EngineUse) and e.started for e in (summary.engines or {}).values())
    # the numbers per model and per group are the summary's own numbers
    assert set(summary.by_model or {}) == {"m1", "m2"}
    assert all(type(n) is Numbers for n in (summary.by_model or {}).values())
    groups = (summary.by_group or {})["benchmark"]
    assert set(groups) == {"b1", "b2", "(none)"} and groups["b1"].responses == 1
    # one response erred: its entry, and the judge calls against --max-failed-calls
    (error,) = summary.errors_list or []
    assert (error.index, error.id) == (2, "r3") and error.error
    assert summary.judge_calls is not None and summary.judge_calls.total
    assert summary.judge_of("entail") == "main" and summary.judge_of("nothing") is None
    # the provenance: the input's digest, each stage's prompt and judge, a configuration value
    p = summary.provenance
    assert p is not None and p.input is not None and len(p.input.sha256 or "") == 64
    assert (p.judges or {})["verifiable"].engine == "panel"
    assert summary.option("media", "max_frames") == RunConfig().media.max_frames
    assert summary.option("no", "such") is None and summary.config["judge"] == "main"
    assert summary.cache is not None and summary.cache.path
    assert summary.ci is not None and summary.ci.resamples == 20


def test_a_key_a_block_does_not_name_is_kept_as_written(tmp_path, media_root):
    result = _run(tmp_path, media_root)
    data = json.loads(result.summary_path.read_text())
    data["stages"]["entail"]["a_newer_counter"] = 3
    data["engines"]["main"]["gpu"] = {"name": "x"}
    data["by_model"]["m1"]["median"] = 0.5
    summary = Summary.model_validate(data)
    assert sorted(unnamed(summary)) == [
        ".by_model.m1: ['median']",
        ".engines.main: ['gpu']",
        ".stages.entail: ['a_newer_counter']",
    ]
    again = summary.dump()
    assert again["stages"]["entail"]["a_newer_counter"] == 3
    assert again["engines"]["main"]["gpu"] == {"name": "x"}
    assert again["by_model"]["m1"]["median"] == 0.5
