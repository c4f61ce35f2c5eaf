"""Scoring imports no scipy (checked in a fresh interpreter)."""

from __future__ import annotations


def test_scoring_does_not_import_scipy():
    # 80 MB and 3 s per process: the score path's intervals are computed without it.
    import subprocess
    import sys

    code = (
        "import sys, murgat_local.pipeline.runner, murgat_local.cli, murgat_local.metrics.intervals;"
        "print('scipy' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
        == "False"
    )
