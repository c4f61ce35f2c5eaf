"""`murgat dataset` past a deep video, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

from support.deep_json import DEEP, TOO_DEEP, _worldsense
from support.paths import ROOT


def test_murgat_dataset_prints_the_other_rows_past_a_deep_video(tmp_path):
    _worldsense(tmp_path / "ws", f'{{"task0": {DEEP}}}')
    proc = subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", "dataset", str(tmp_path / "ws")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    bad, ok = map(json.loads, proc.stdout.splitlines())
    assert bad["error"] == f"video 'bad': {TOO_DEEP}" and ok["id"] == "ok/task0"
