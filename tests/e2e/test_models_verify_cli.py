"""Every command refuses a half-copied model folder before any engine starts (the real command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.model_folder_fixtures import _truncate
from support.paths import ROOT, require_model


def _murgat(*args, cwd):
    env = dict(os.environ, COLUMNS="400", PYTHONUNBUFFERED="1")
    started = time.monotonic()
    proc = subprocess.run(
        ["timeout", "-k", "10", "120", sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    return proc, time.monotonic() - started


@pytest.mark.parametrize("command", ["score", "generate", "run", "smoke"])
def test_every_command_refuses_a_half_copied_folder_before_any_engine_starts(
    command, folder, tmp_path
):
    _truncate(folder / "model.safetensors", (folder / "model.safetensors").stat().st_size // 2)
    responses = tmp_path / "responses.jsonl"
    responses.write_text(
        json.dumps({"id": "a", "video": "colors", "model_generation": "Red (visual, 0:00)."}) + "\n"
    )
    out = tmp_path / "out"
    dataset = ROOT / "samples" / "questions.jsonl"
    args = {
        "score": ["score", responses, "--media-root", tmp_path, "--out", out, "--judge", folder],
        "generate": [
            "generate",
            dataset,
            "--media-root",
            tmp_path,
            "--out",
            out,
            "--model",
            folder,
            "--strategy",
            "cite",
        ],
        # the responder is whole, the judge is not: refused before the responder starts as well
        "run": [
            "run",
            dataset,
            "--media-root",
            tmp_path,
            "--out",
            out,
            "--model",
            "smollm2-135m-instruct",
            "--judge",
            folder,
            "--strategy",
            "cite",
        ],
        "smoke": ["smoke", "--model", folder],
    }[command]
    if command == "run":
        require_model("smollm2-135m-instruct")
    proc, took = _murgat(*args, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr  # as a model that cannot be found: it cannot start
    assert str(folder / "model.safetensors") in proc.stderr and "truncated" in proc.stderr
    assert "Traceback" not in proc.stderr and "engine logs" not in proc.stderr
    assert not list(tmp_path.rglob("engine.log")) and not list(tmp_path.rglob("*.engine.log"))
    assert took < 20  # an engine takes longer than this just to start
