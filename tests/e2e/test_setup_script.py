"""`scripts/setup.sh` as scripts/test.sh calls it: in two parts (`--environment`, then `--data`
beside the checks), each part refusing what it cannot do, and the data builds run side by side
with a failed build named at the end of the log."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.paths import ROOT

SETUP = ROOT / "scripts" / "setup.sh"


def setup(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["timeout", "-k", "10", "300", "bash", str(SETUP), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **{k: str(v) for k, v in env.items()}},
        cwd=ROOT,
    )


def test_an_unknown_part_is_refused_with_the_usage(tmp_path):
    done = setup("--everything", MURGAT_SETUP_LOG=tmp_path / "setup.log")
    assert done.returncode == 2
    assert "usage: scripts/setup.sh [--environment | --data]" in done.stderr


def test_the_data_part_needs_the_environment_part_first(tmp_path):
    log = tmp_path / "setup.log"
    log.write_text("set-up of an earlier run\n")
    done = setup("--data", MURGAT_VENV=tmp_path / "no-venv", MURGAT_SETUP_LOG=log)
    assert done.returncode == 1
    assert f"no venv at {tmp_path / 'no-venv'}" in done.stdout
    # The data part adds to the log the environment part began; it does not rewrite it.
    assert log.read_text().startswith("set-up of an earlier run\n")


def test_a_failed_build_stops_set_up_and_is_named_at_the_end_of_its_log(tmp_path):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no venv: run scripts/setup.sh")
    log = tmp_path / "setup.log"
    # The two model builds cannot write there; the sample media build (already made) succeeds.
    done = setup("--data", MURGAT_MODELS_DIR="/proc/murgat-no-such-dir", MURGAT_SETUP_LOG=log)
    assert done.returncode == 1, done.stdout + done.stderr
    text = log.read_text()
    tiny, text_models = (
        text.index("[setup] failed: the tiny build (exit 1)"),
        text.index("[setup] failed: the text build (exit 1)"),
    )
    assert "/proc/murgat-no-such-dir" in text[text_models:]
    # The build that succeeded is logged first: a failure's own lines end the log, which is
    # what the script prints when it stops.
    assert text.index("colors") < tiny < text_models
    assert "[setup] failed (exit 1)" in done.stderr and "the text build" in done.stderr
    assert "ready:" not in done.stdout
