"""Where the checkout and the local test models are, and the check that a model is there."""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("MURGAT_MODELS_DIR", ROOT / ".local" / "models"))


def require_model(name: str) -> pathlib.Path:
    path = MODELS / name
    if not (path / "config.json").is_file():
        pytest.fail(f"local test model {path} is missing: run scripts/setup.sh first")
    return path
