"""summary.json says how every number was produced."""

from __future__ import annotations

import hashlib
import json

from support.fakes import OracleEngine

from murgat_local.config import RunConfig
from murgat_local.judges import load_prompt
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


def test_summary_records_config_prompts_judges_versions_and_input(tmp_path, media_root):
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(
            {"id": "a", "video": "colors", "model_generation": "The screen is red (visual, 0:00)."}
        )
        + "\n"
    )
    cfg = RunConfig(judge="oracle", batch_size=7, media={"max_frames": 12})
    runner = Runner(
        cfg,
        media_root,
        tmp_path / "out",
        engines={"oracle": OracleEngine(salt="v1")},
        summary=RunSummary,
    )
    try:
        result = runner.run(path)
    finally:
        runner.close()
    p = json.loads(result.summary_path.read_text())["provenance"]
    assert p["config"]["batch_size"] == 7 and p["config"]["media"]["max_frames"] == 12
    assert p["config"]["max_failed_calls"] == cfg.max_failed_calls
    assert p["prompts"]["entail"] == {"template": "entail", "digest": load_prompt("entail").digest}
    assert p["prompts"]["decontext"]["template"] == "decontextualize"
    assert p["judges"]["entail"]["identity"] == "oracle:oracle:v1"
    assert set(p["versions"]) >= {"murgat_local", "vllm", "transformers", "torch", "python"}
    assert p["versions"]["murgat_local"]
    assert p["input"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert p["media_root"] == str(media_root.resolve())
