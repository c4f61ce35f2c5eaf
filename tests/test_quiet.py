"""Quiet by default: engine output goes to OUT/engine.log, ours stays on the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from typer.testing import CliRunner

from murgat_local.cli import app

# Stands in for an engine: a Python logger, a C-level write, a child process and a spawned
# worker (as vLLM's engine core is) all write to stdout/stderr; we write to the terminal.
ENGINE = r"""
import logging, multiprocessing, os, pathlib, subprocess, sys
from murgat_local.reports.logs import redirect_fds

def worker():
    print("engine-worker-out", flush=True)

if __name__ == "__main__":
    log = pathlib.Path(sys.argv[1])
    print("before", flush=True)
    try:
        with redirect_fds(log) as terminal:
            terminal.stdout.write("ours-out\n")
            terminal.stderr.write("ours-err\n")
            logger = logging.getLogger("engine")
            logger.addHandler(logging.StreamHandler())  # bound to sys.stderr, as vLLM's are
            logger.warning("engine-logger-warning")
            print("engine-print")  # left in Python's buffer: flushed into the log on the way out
            os.write(1, b"engine-c-out\n")
            os.write(2, b"engine-c-err\n")
            subprocess.run([sys.executable, "-c",
                            "import sys; print('engine-child-out'); print('engine-child-err', file=sys.stderr)"])
            p = multiprocessing.get_context("spawn").Process(target=worker)
            p.start(); p.join()
            raise RuntimeError("engine-failure")
    except RuntimeError as e:
        print(f"after: {e}", file=sys.stderr)
    print("after-out")
"""

ENGINE_LINES = ["engine-print", "engine-logger-warning", "engine-c-out", "engine-c-err",
                "engine-child-out", "engine-child-err", "engine-worker-out"]


def test_engine_output_goes_to_the_log_and_ours_to_the_terminal(tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    log = tmp_path / "out" / "engine.log"
    log.parent.mkdir()
    log.write_text("earlier run\n")
    proc = subprocess.run([sys.executable, str(script), str(log)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["before", "ours-out", "after-out"]
    assert proc.stderr.split("\n")[:2] == ["ours-err", "after: engine-failure"]
    logged = log.read_text()
    assert logged.startswith("earlier run\n")  # appended, not truncated
    assert all(line in logged for line in ENGINE_LINES), logged
    assert not any(word in logged for word in ("ours-", "before", "after"))


def test_score_has_verbose_option():
    r = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "--verbose" in r.output and "engine.log" in r.output


def murgat(*args, cwd):
    return subprocess.run([sys.executable, "-m", "murgat_local.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=dict(os.environ, COLUMNS="200"))


def test_score_names_the_log_and_errors_reach_the_terminal(tmp_path):
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"id": "a", "video": "v", "model_generation": "It is red (visual, 0:01)."}) + "\n")
    out = tmp_path / "out"
    # The item's video is missing: the run goes on (no model is needed) and exits 1.
    args = ["score", responses, "--media-root", tmp_path, "--out", out, "--judge", "tiny-qwen3-omni"]
    proc = murgat(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert f"engine logs: {out / 'engine.log'}" in proc.stderr
    assert "not found" in " ".join(proc.stdout.split())  # the errors table reaches the terminal
    assert "not found" not in (out / "engine.log").read_text()

    verbose = murgat(*args, "--verbose", cwd=tmp_path)
    assert verbose.returncode == 1 and "engine logs:" not in verbose.stderr

    # A usage error is reported before anything is redirected.
    bad = murgat(*args, "--models-dir", tmp_path / "empty", cwd=tmp_path)
    assert bad.returncode == 2 and "error:" in bad.stderr and "tiny-qwen3-omni" in bad.stderr
