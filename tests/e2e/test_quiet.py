"""Quiet by default: engine output goes to OUT/engine.log, ours stays on the terminal."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

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

ENGINE_LINES = [
    "engine-print",
    "engine-logger-warning",
    "engine-c-out",
    "engine-c-err",
    "engine-child-out",
    "engine-child-err",
    "engine-worker-out",
]


def test_engine_output_goes_to_the_log_and_ours_to_the_terminal(tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    log = tmp_path / "out" / "engine.log"
    log.parent.mkdir()
    log.write_text("earlier run\n")
    proc = subprocess.run(
        [sys.executable, str(script), str(log)], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["before", "ours-out", "after-out"]
    assert proc.stderr.split("\n")[:2] == ["ours-err", "after: engine-failure"]
    logged = log.read_text()
    assert logged.startswith("earlier run\n")  # appended, not truncated
    assert all(line in logged for line in ENGINE_LINES), logged
    assert not any(word in logged for word in ("ours-", "before", "after"))


def murgat(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_score_names_the_log_and_errors_reach_the_terminal(tmp_path):
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        json.dumps({"id": "a", "video": "v", "model_generation": "It is red (visual, 0:01)."})
        + "\n"
    )
    out = tmp_path / "out"
    # The item's video is missing: the run goes on (no model is needed) and exits 1.
    args = [
        "score",
        responses,
        "--media-root",
        tmp_path,
        "--out",
        out,
        "--judge",
        "tiny-qwen3-omni",
    ]
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


# ---------------------------------------------------------------- every command that starts an engine

# A registered engine that writes as vLLM does (a logger, C-level writes, a child process) at
# start, on every batch and at close, and answers as the oracle does: the real CLI, no model.
NOISY = r"""
import logging, os, subprocess, sys

from support.fakes import OracleEngine

logging.basicConfig()  # a handler on stderr, bound at import as vLLM's are


def noise(when):
    logging.getLogger("vllm").warning("engine-logger-%s", when)
    print(f"engine-print-{when}")
    os.write(1, f"engine-c-out-{when}\n".encode())
    os.write(2, f"engine-c-err-{when}\n".encode())
    subprocess.run([sys.executable, "-c", f"print('engine-child-{when}')"])


class NoisyEngine(OracleEngine):
    def __init__(self, preset, **options):
        super().__init__(preset.name, preset.modalities)
        noise("start")

    def _answer(self, req):
        if req.verdict is None:  # a responder's turn
            return req.choices[0] if req.choices else "It is red (visual, 0:00).\nAnswer: A"
        if "<<<" not in req.prompt:  # `murgat smoke`'s probes
            return '{"label":"YES"}'
        try:
            return super()._answer(req)
        except AttributeError:  # a prompt the oracle does not know (a program's tools): unparsed
            return "{}"

    def judge(self, requests):
        noise("judge")
        return super().judge(requests)

    def close(self):
        noise("close")
"""

MAIN = r"""
import sys
from murgat_local.engines import register_engine
register_engine("noisy", "noisy:NoisyEngine", "json")
from murgat_local.cli import app
app(sys.argv[1:], prog_name="murgat")
"""

TESTS = pathlib.Path(__file__).resolve().parents[1]


def noisy_murgat(tmp_path, *args, engine=NOISY, columns=80):
    (tmp_path / "noisy.py").write_text(engine)
    (tmp_path / "main.py").write_text(MAIN)
    env = dict(
        os.environ, COLUMNS=str(columns), PYTHONPATH=os.pathsep.join([str(tmp_path), str(TESTS)])
    )
    return subprocess.run(
        [sys.executable, str(tmp_path / "main.py"), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )


def logged_at(stderr: str) -> pathlib.Path:
    (line,) = [l for l in stderr.splitlines() if l.startswith("engine logs: ")]
    return pathlib.Path(line.removeprefix("engine logs: ").split(" (--verbose")[0])


def check_quiet(proc, *, show: str) -> pathlib.Path:
    """Nothing of the engine's reaches the terminal, `show` does, and the engine's output is all in
    the log the command names."""
    said = proc.stdout + proc.stderr
    assert "engine-" not in said.replace("engine logs:", ""), said
    assert show in said, said
    log = logged_at(proc.stderr).read_text()
    for when in ("start", "judge", "close"):
        for what in ("logger", "print", "c-out", "c-err", "child"):
            assert f"engine-{what}-{when}" in log, (what, when, log)
    return logged_at(proc.stderr)


@pytest.fixture()
def local_models():
    from support.paths import require_model

    for m in ("tiny-qwen3-omni", "smollm2-135m-instruct"):
        require_model(m)


def test_smoke_sends_engine_output_to_a_log_and_verbose_shows_it(tmp_path, local_models):
    args = [
        "smoke",
        "--engine",
        "noisy",
        "--model",
        "smollm2-135m-instruct",
        "--model",
        "tiny-qwen3-omni",
    ]
    quiet = noisy_murgat(tmp_path, *args)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    check_quiet(quiet, show="smollm2-135m-instruct")
    assert len((quiet.stdout + quiet.stderr).splitlines()) <= 15
    assert "audio" in quiet.stdout and "tiny-qwen3-omni" in quiet.stdout

    verbose = noisy_murgat(tmp_path, *args, "--verbose")
    assert verbose.returncode == 0 and "engine logs:" not in verbose.stderr
    for what in ("logger", "c-out", "c-err", "child"):
        assert f"engine-{what}-start" in verbose.stdout + verbose.stderr

    bad = noisy_murgat(tmp_path, "smoke", "--engine", "noisy", "--model", "no-such-model")
    assert (
        bad.returncode == 2 and "no-such-model" in bad.stderr and "engine logs:" not in bad.stderr
    )


def test_a_model_that_cannot_start_is_its_row_and_the_log_is_named(tmp_path, local_models):
    start = '        noise("start")\n'
    broken = NOISY.replace(start, start + '        raise RuntimeError("see root cause above")\n', 1)
    proc = noisy_murgat(
        tmp_path,
        "smoke",
        "--engine",
        "noisy",
        "--model",
        "smollm2-135m-instruct",
        "--model",
        "tiny-qwen3-omni",
        engine=broken,
        columns=200,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = " ".join((proc.stdout + proc.stderr).split())
    assert said.count("RuntimeError: see root cause above") == 2  # both models tried, each its row
    log = logged_at(proc.stderr)
    assert f"got no verdict; the engines' own output is in {log}" in said
    assert "engine-c-err-start" in log.read_text() and "engine-" not in said.replace(
        "engine logs:", ""
    )


def test_score_generate_run_and_program_run_keep_engine_output_in_their_logs(
    tmp_path, local_models, media_root
):
    root = pathlib.Path(__file__).resolve().parents[2]
    judges = [
        "--engine",
        "noisy",
        "--judge",
        "tiny-qwen3-omni",
        "--verifier",
        "smollm2-135m-instruct",
        "--decomposer",
        "smollm2-135m-instruct",
    ]
    score = noisy_murgat(
        tmp_path,
        "score",
        root / "samples" / "responses.jsonl",
        "--media-root",
        media_root,
        "--out",
        tmp_path / "score",
        "--limit",
        "3",
        *judges,
    )
    assert score.returncode == 0, score.stdout + score.stderr
    assert check_quiet(score, show="MURGAT-S") == tmp_path / "score" / "engine.log"

    questions = root / "samples" / "questions.jsonl"
    gen = noisy_murgat(
        tmp_path,
        "generate",
        questions,
        "--media-root",
        media_root,
        "--out",
        tmp_path / "gen",
        "--model",
        "tiny-qwen3-omni",
        "--strategy",
        "cite",
        "--engine",
        "noisy",
        "--limit",
        "2",
    )
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert check_quiet(gen, show="Generation") == tmp_path / "gen" / "engine.log"

    run = noisy_murgat(
        tmp_path,
        "run",
        questions,
        "--media-root",
        media_root,
        "--out",
        tmp_path / "run",
        "--model",
        "tiny-qwen3-omni",
        "--limit",
        "2",
        *judges,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert check_quiet(run, show="MURGAT-S") == tmp_path / "run" / "engine.log"

    # `program run` keeps its work (the log among it) in a folder of its own.
    (tmp_path / "plan.py").write_text(
        "def main(video):\n"
        '    notes = [video.query("0:01-0:02", "What colour is it?", "visual")]\n'
        '    return answer("Which colour?", notes, ["A", "B"])\n'
    )
    program = noisy_murgat(
        tmp_path,
        "program",
        "run",
        tmp_path / "plan.py",
        "--style",
        "logic",
        "--video",
        "colors",
        "--media-root",
        media_root,
        "--model",
        "tiny-qwen3-omni",
        "--engine",
        "noisy",
        "--question",
        "Which colour?",
        "--option",
        "red",
        "--option",
        "green",
    )
    assert program.returncode in (0, 1), (
        program.stdout + program.stderr
    )  # the oracle may not read a tool's prompt
    assert check_quiet(program, show='"status"').name == "engine.log"


@pytest.mark.engine
@pytest.mark.slow
def test_smoke_on_vllm_prints_its_table_and_nothing_of_vllm(tmp_path):
    """The real engine, once (the smallest model): vLLM's warnings, its engine-core process and
    its C-level output all go to the log; the terminal shows the table, the CPU and the dtype
    chosen for it (two lines), and the log's path."""
    from support.paths import require_model

    require_model("smollm2-135m-instruct")
    env = dict(os.environ, COLUMNS="80")
    proc = subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", "smoke", "--model", "smollm2-135m-instruct"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "smollm2-135m-instruct" in proc.stdout and len(said.splitlines()) <= 10, said
    assert "CPU: " in proc.stderr and "dtype" in proc.stderr, said
    assert not any(word in said for word in ("WARNING", "INFO", "Triton", "pid=")), said
    log = logged_at(proc.stderr).read_text()
    assert "WARNING" in log and "EngineCore" in log
