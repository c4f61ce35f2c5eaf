"""Checks that a summary the current murgat wrote is read back whole: every key it holds is one
its model names (none kept as an unknown block key), and writing it again gives the same text."""

from __future__ import annotations

import json
import pathlib

from pydantic import BaseModel

from murgat_local.jsonl import dumps_record
from murgat_local.results.versions import Versioned


def unnamed(value: object, where: str = "") -> list[str]:
    """Where `value` (a model read from a file, and what it holds) keeps a key its model does
    not name: `path: [keys]` per block."""
    out = []
    if isinstance(value, BaseModel):
        if value.model_extra:
            out.append(f"{where or '(top)'}: {sorted(value.model_extra)}")
        for name in value.model_fields_set:
            out += unnamed(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, dict):
        for k, v in value.items():
            out += unnamed(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += unnamed(v, f"{where}[{i}]")
    return out


def assert_read_whole(path: pathlib.Path, model: type[Versioned]) -> Versioned:
    """The file as `model`, after checking it names every key and writes back byte for byte."""
    text = path.read_text(encoding="utf-8")
    read = model.model_validate(json.loads(text))
    assert unnamed(read) == [], (path, unnamed(read))
    assert dumps_record(read.dump(), indent=2, sort_keys=True, default=str) == text, path
    return read
