"""scripts/gpu_check.py's model list is the local test models."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


SCRIPT = ROOT / "scripts" / "gpu_check.sh"


def test_its_model_list_is_the_local_test_models():
    from murgat_local.judges.smoke import LOCAL_TEST_MODELS

    listed = re.search(r'^LOCAL_TEST_MODELS="([^"]+)"', SCRIPT.read_text(), re.M).group(1).split()
    assert listed == list(LOCAL_TEST_MODELS)
