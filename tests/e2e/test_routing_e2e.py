"""Routing on a real engine: gemma3 scores visual citations on vLLM's CPU build."""

from __future__ import annotations

import json

import pytest
from support.routing_rows import VISUAL


@pytest.mark.engine
@pytest.mark.slow
def test_gemma3_scores_visual_citations_on_vllms_cpu_build(tmp_path, media_root):
    """The real run the refusal at start used to stop: every stage on random-weight Gemma-3."""
    import os
    import subprocess
    import sys

    from support.paths import ROOT

    responses = tmp_path / "v.jsonl"
    responses.write_text(json.dumps(VISUAL) + "\n")
    env = dict(os.environ)
    proc = subprocess.run(
        [
            "timeout",
            "-k",
            "10",
            "420",
            sys.executable,
            "-m",
            "murgat_local.cli",
            "score",
            str(responses),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path / "out"),
            "--judge",
            "tiny-gemma3",
            "--no-decontextualize",
            "--max-failed-calls",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["models"]["entail"] == "tiny-gemma3" and summary["responses"] == 1
    assert (
        summary["stages"]["verifiable"]["model_calls"] == 3
        and summary["stages"]["entail"]["errors"] == 0
    )
