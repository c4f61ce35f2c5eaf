"""The NVIDIA driver check of a CUDA bundle (install.sh's tools/check.py) and of `murgat smoke`:
the driver read from `nvidia-smi` or /proc/driver/nvidia/version (fakes of both: below, at and
above the series the CUDA release needs, and none), and what each refuses."""

from __future__ import annotations

import pathlib

import pytest
from typer.testing import CliRunner

from murgat_local.bundle import box, check
from murgat_local.cli import app

# /proc/driver/nvidia/version as the proprietary and the open kernel modules write it.
PROC_CLOSED = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
)
PROC_OPEN = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
)


def test_parse_both_sources():
    assert box.parse_nvidia_smi("570.86.15\n570.86.15\n") == "570.86.15"
    assert box.parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate") is None
    assert box.parse_proc_version(PROC_CLOSED) == "550.54.14"
    assert box.parse_proc_version(PROC_OPEN) == "580.65.06"
    assert box.parse_proc_version("GCC version: gcc version 12.2.0\n") is None


def test_needed_driver_from_nvidias_table():
    assert [box.needed_driver(c) for c in ("13.0", "13.1", "12.8", "12.6", "12.4")] == [
        580,
        580,
        570,
        560,
        550,
    ]
    assert box.needed_driver("12.7") is None  # no such release: the table does not guess


def _fake_smi(tmp_path: pathlib.Path, output: str, rc: int = 0) -> pathlib.Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        '[ "$1" = --query-gpu=driver_version ] && [ "$2" = --format=csv,noheader ] || exit 9\n'
        f"printf '%s' '{output}'\nexit {rc}\n"
    )
    smi.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize(
    ("smi", "proc", "have", "where"),
    [
        ("550.54.14\n", None, "550.54.14", "nvidia-smi"),  # below 580
        ("580.65.06\n580.65.06\n", None, "580.65.06", "nvidia-smi"),  # at
        ("590.12\n", None, "590.12", "nvidia-smi"),  # above
        (None, PROC_CLOSED, "550.54.14", "proc"),  # no nvidia-smi: /proc
        (None, PROC_OPEN, "580.65.06", "proc"),
        ("", PROC_OPEN, "580.65.06", "proc"),  # nvidia-smi fails: /proc
        (None, None, None, "none"),  # no driver
    ],
)
def test_read_driver(tmp_path, monkeypatch, smi, proc, have, where):
    path = str(_fake_smi(tmp_path, smi, rc=0 if smi else 9)) if smi is not None else ""
    monkeypatch.setenv("PATH", path or str(tmp_path / "empty"))
    proc_file = tmp_path / "version"
    if proc is not None:
        proc_file.write_text(proc)
    got, source = box.read_driver(proc_file)
    assert got == have
    if where == "proc":
        assert source == str(proc_file)
    elif where == "none":
        assert "nvidia-smi" in source and str(proc_file) in source
    else:
        assert source == "nvidia-smi"


@pytest.mark.parametrize(
    ("have", "refused"),
    [("550.54.14", True), ("579.99", True), ("580.65.06", False), ("590.1", False)],
)
def test_driver_problem_names_both_versions_and_what_to_do(have, refused):
    problem = box.driver_problem("13.0", 580, have, "nvidia-smi")
    if not refused:
        assert problem is None
        return
    assert problem is not None
    assert "CUDA 13.0" in problem and "580 series" in problem and have in problem
    assert "install driver 580 or newer" in problem


CUDA_INFO = {"cuda": {"version": "13.0", "driver": 580}}


def test_check_refuses_a_box_with_no_driver_unless_allowed(monkeypatch):
    monkeypatch.setattr(box, "read_driver", lambda: (None, "no nvidia-smi on PATH"))
    (problem,) = check.check_driver(CUDA_INFO, allow_no_gpu=False)
    assert "no NVIDIA GPU" in problem and "CPU route only" in problem and "--target cpu" in problem
    assert "--allow-no-gpu" in problem
    assert check.check_driver(CUDA_INFO, allow_no_gpu=True) == []
    assert check.check_driver({"cuda": None}, allow_no_gpu=False) == []  # a CPU bundle


def test_check_refuses_an_old_driver_even_when_no_gpu_is_allowed(monkeypatch):
    monkeypatch.setattr(box, "read_driver", lambda: ("550.54.14", "nvidia-smi"))
    (problem,) = check.check_driver(CUDA_INFO, allow_no_gpu=True)
    assert "550.54.14" in problem and "580" in problem
    monkeypatch.setattr(box, "read_driver", lambda: ("580.65.06", "nvidia-smi"))
    assert check.check_driver(CUDA_INFO, allow_no_gpu=False) == []


def test_check_space_names_what_is_missing(tmp_path, monkeypatch):
    class Usage:
        free = 3 * 10**9

    monkeypatch.setattr(check.shutil, "disk_usage", lambda path: Usage)
    entries = [{"path": "models/m/model.safetensors", "size": 2 * 10**9}]
    problems = check.check_space(
        {"installed_bytes": 4 * 10**9}, entries, tmp_path / "venv", tmp_path / "models"
    )
    assert len(problems) == 1  # one filesystem: venv and models summed
    assert "6.0 GB needed (the venv" in problems[0] and "3.0 GB free; 3.0 GB missing" in problems[0]
    Usage.free = 7 * 10**9
    assert (
        check.check_space({"installed_bytes": 4 * 10**9}, entries, tmp_path / "v", tmp_path) == []
    )


# --- murgat smoke -------------------------------------------------------------------------------


@pytest.fixture
def cuda_build(monkeypatch):
    import murgat_local.engines.identity as identity

    monkeypatch.setattr(identity, "vllm_cpu_build", lambda: False)
    monkeypatch.setattr(box, "installed_torch_cuda", lambda: "13.0")


def test_smoke_refuses_vllms_cuda_build_without_a_gpu_in_one_line(cuda_build, monkeypatch):
    monkeypatch.setattr(box, "read_driver", lambda: (None, "no nvidia-smi on PATH"))
    done = CliRunner().invoke(app, ["smoke", "--model", "tiny-gemma3"], env={"COLUMNS": "300"})
    assert done.exit_code == 1, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "no NVIDIA GPU" in lines[0] and "CUDA 13.0" in lines[0], lines


def test_smoke_refuses_an_old_driver(cuda_build, monkeypatch):
    monkeypatch.setattr(box, "read_driver", lambda: ("570.86.15", "nvidia-smi"))
    done = CliRunner().invoke(app, ["smoke", "--model", "tiny-gemma3"], env={"COLUMNS": "300"})
    assert done.exit_code == 1 and "570.86.15" in done.output and "580" in done.output


def test_smoke_on_the_cpu_build_checks_no_driver(monkeypatch):
    import murgat_local.engines.identity as identity
    from murgat_local.cli import tools

    monkeypatch.setattr(identity, "vllm_cpu_build", lambda: True)
    monkeypatch.setattr(box, "installed_torch_cuda", lambda: "13.0")
    monkeypatch.setattr(box, "read_driver", lambda: pytest.fail("read on the CPU build"))
    assert tools._cuda_driver_refusal() is None
