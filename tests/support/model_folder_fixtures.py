"""A copy of a local test model to damage (fixtures: tests/conftest.py loads this plugin)."""

from __future__ import annotations

import shutil

import pytest

from support.paths import require_model

MODEL = "tiny-gemma3"  # takes images: it needs its processor files as well as its tokenizer


@pytest.fixture
def folder(tmp_path):
    """A fresh copy of the tiny model, under a models root of its own."""
    copy = tmp_path / "models" / MODEL
    shutil.copytree(require_model(MODEL), copy)
    return copy


def _truncate(path, keep: int):
    with path.open("r+b") as fh:
        fh.truncate(keep)
