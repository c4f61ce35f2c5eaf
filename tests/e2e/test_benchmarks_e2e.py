"""A benchmark folder as downloaded, through `murgat run` on the real engines: no --media-root,
a stratified subset, the attached image seen, the open question graded, the categories carried
into the score records."""

from __future__ import annotations

import json

import pytest
from support.cli import JUDGES, murgat
from support.paths import require_model

from murgat_local.sample import benchmarks as layouts

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def rows(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_videommmu_folder_is_generated_and_scored_as_downloaded(tmp_path, media_root, config):
    for m in ("tiny-qwen3-omni", "smollm2-135m-instruct"):
        require_model(m)
    vm = layouts.videommmu(
        tmp_path / "VideoMMMU", media_root / "colors.mp4", per_track=2, bad=False
    )
    out = tmp_path / "run"
    proc = murgat(
        "run",
        vm,
        "--out",
        out,
        "--config",
        config,
        "--model",
        "tiny-qwen3-omni",
        "--strategy",
        "cite",
        *JUDGES,
        "--sample",
        "4",
        "--seed",
        "2",
        "--stratify",
        "track",
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    cell = out / "tiny-qwen3-omni__cite"
    gen = rows(cell / "responses.jsonl")
    assert len(gen) == 4 and all(r["status"] == "ok" for r in gen.values()), gen
    tracks = sorted(r["categories"]["track"] for r in gen.values())
    assert set(tracks) == {"Perception", "Comprehension", "Adaptation"}
    for r in gen.values():
        assert r["benchmark"] == "videommmu" and (vm / r["video"]).is_file()
        if r["categories"]["track"] == "Adaptation":
            assert r["media"]["images"]["shown"] == 1
    scores = rows(cell / "scores.jsonl")
    assert set(scores) == set(gen)
    for rid, rec in scores.items():
        assert rec["status"] == "ok", rec
        assert rec["categories"] == gen[rid]["categories"] and rec["benchmark"] == "videommmu"
        assert rec["question_type"] == gen[rid]["question_type"]
    summary = json.loads((out / "generation_summary.json").read_text())
    assert summary["provenance"]["subset"]["stratify"] == "track"
    assert summary["provenance"]["dataset"]["format"] == "videommmu"
