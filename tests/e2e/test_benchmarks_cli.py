"""`murgat dataset` on the benchmark layouts, as a user runs it (the real command in a child
process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import ROOT


def murgat(*args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


def test_murgat_dataset_prints_every_question_as_responders_see_it(videommmu, tmp_path):
    proc = murgat("dataset", videommmu, "--limit", "7")
    assert proc.returncode == 1, proc.stderr  # two rows of the first track are bad
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 7
    first = lines[0]
    assert set(first) == {
        "id",
        "video",
        "question",
        "options",
        "answer",
        "question_type",
        "images",
        "categories",
    }
    assert first["video"] == str(videommmu / "Science" / "validation_Physics_1.mp4")
    errors = [r for r in lines if "error" in r]
    assert [e["id"] for e in errors] == [
        "Perception/validation_Astrology_1",
        "Perception/validation_Physics_99",
    ]
    adapt = [
        json.loads(line) for line in murgat("dataset", videommmu / "Adaptation").stdout.splitlines()
    ]
    assert adapt[0]["images"][0]["name"] == "validation_Physics_1.png"
    (tmp_path / "empty").mkdir()
    failed = murgat("dataset", tmp_path / "empty")
    assert failed.returncode == 2 and "matches no dataset format" in failed.stderr


def test_a_missing_video_is_that_questions_error(worldsense):
    proc = murgat("dataset", worldsense)
    lines = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert lines["wsnovideo/task0"]["error"] == f"video videos/wsnovideo.mp4 is not in {worldsense}"
    assert "error" not in lines["ws00000/task0"]
