"""The calibration statistics import no scipy (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys


def test_the_new_statistics_do_not_import_scipy():
    code = (
        "import sys, murgat_local.metrics.calibration, murgat_local.metrics.certify, "
        "murgat_local.metrics.ppi; print('scipy' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
        == "False"
    )
