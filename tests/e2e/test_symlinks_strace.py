"""Nothing outside the media root is touched, watched under strace (the real command)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from support.paths import ROOT


@pytest.mark.skipif(
    shutil.which("strace") is None, reason="strace is not installed (scripts/setup.sh installs it)"
)
def test_nothing_outside_the_root_is_touched_under_strace(layout, tmp_path_factory):
    tmp, root, outside = layout
    work = tmp_path_factory.mktemp("work")
    rows = [
        {"id": v, "video": v, "model_generation": "The screen is red (visual, 0:00)."}
        for v in (
            "colors",
            "clips/alias",
            "evil",
            "chain",
            "../OUTSIDE_ZONE/secret",
            str(outside / "secret.mp4"),
        )
    ]
    responses = work / "r.jsonl"
    responses.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    trace = work / "strace.log"
    cmd = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "trace=%file",
        "-o",
        str(trace),
        sys.executable,
        "-m",
        "murgat_local.cli",
        "score",
        str(responses),
        "--media-root",
        str(tmp / "root_link"),
        "--out",
        str(work / "out"),
        "--judge",
        "tiny-qwen3-omni",
        "--dry-run",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    touched = [line for line in trace.read_text().splitlines() if "OUTSIDE_ZONE" in line]
    assert touched == [], touched[:5]
    # The same run reached the good videos (so the trace is of real lookups).
    assert any("colors.mp4" in line for line in trace.read_text().splitlines())
