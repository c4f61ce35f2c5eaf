"""install.sh fails loudly and ends what it starts: run for real on a made-up bundle whose venv
is a stand-in (its `python` and `murgat` are small scripts), so each failure path costs a
second: a missing model file, a failed model copy, a signal during the smoke test, and which
models the smoke test takes."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from murgat_local.bundle import build
from murgat_local.bundle.place import smoke_cover

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
MODELS = [
    {
        "folder": "omni",
        "preset": "tiny-omni",
        "test": True,
        "modalities": ["audio", "image", "text"],
    },
    {"folder": "vl", "preset": "tiny-vl", "test": True, "modalities": ["image", "text", "video"]},
    {"folder": "txt", "preset": "tiny-text", "test": True, "modalities": ["text"]},
]


def test_smoke_cover_takes_the_fewest_models_for_every_modality():
    assert smoke_cover(MODELS) == ["tiny-omni", "tiny-vl"]
    assert smoke_cover(MODELS[2:]) == ["tiny-text"]
    assert smoke_cover([{**MODELS[0], "test": False}]) == []


def make_bundle(tmp_path: pathlib.Path) -> pathlib.Path:
    out = tmp_path / "bundle"
    files = {
        "wheels/x-1-py3-none-any.whl": b"not really a wheel",
        "requirements.txt": b"x==1 --hash=sha256:00\n",
        **{f"models/{m['folder']}/config.json": b"{}" for m in MODELS},
    }
    src = pathlib.Path(build.__file__).parent
    for tool in ("check.py", "box.py"):
        files[f"tools/{tool}"] = (src / tool).read_bytes()
    for rel, data in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    info = {
        "target": "cpu",
        "python": PYTHON,
        "platform": "any",
        "cuda": None,
        "installed_bytes": 1000,
        "models": MODELS,
        "libraries": [],
        "tools": [],
    }
    entries = [
        {"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for rel, data in sorted(files.items())
    ]
    (out / "MANIFEST.json").write_text(json.dumps({"bundle": info, "files": entries}))
    script = build.render_install(PYTHON, "cpu", "x-1-py3-none-any.whl", [], [])
    (out / "install.sh").write_text(script)
    return out


def make_venv(tmp_path: pathlib.Path, place_fails: bool = False) -> pathlib.Path:
    """A venv whose python answers install.sh's calls (pip: done; the model step: a plan of
    every kind) and whose murgat records its arguments; `smoke` starts a child and waits."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls"
    plan = "\n".join(
        [*(f"verify {m['preset']}" for m in MODELS), "smoke tiny-omni", "smoke tiny-vl"]
        + [f"test {m['preset']}" for m in MODELS]
        + ["judge tiny-omni", ""]
    )
    python = venv / "bin" / "python"
    python.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "python $*" >> {log}\n'
        'if [ "$2" = murgat_local.bundle.place ]; then\n'
        + ("  echo 'disk full' >&2; exit 1\n" if place_fails else f"  printf '{plan}' > \"$5\"\n")
        + "fi\n"
    )
    murgat = venv / "bin" / "murgat"
    murgat.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "murgat $*" >> {log}\n'
        'if [ "$1" = smoke ] && [ -n "${SMOKE_HANGS:-}" ]; then\n'
        '  sleep 300 & echo "$$ $!" > "$SMOKE_HANGS"; wait\n'
        "fi\n"
    )
    python.chmod(0o755)
    murgat.chmod(0o755)
    return venv


def env_for(tmp_path: pathlib.Path, **more: str) -> dict:
    return {
        "PATH": f"{pathlib.Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        **more,
    }


def install(tmp_path, bundle, venv, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(bundle / "install.sh"), str(venv), *args],
        env=env_for(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def calls(tmp_path) -> list[str]:
    return (tmp_path / "calls").read_text().splitlines()


def test_install_goes_through_and_smokes_one_model_per_modality(tmp_path):
    bundle, venv = make_bundle(tmp_path), make_venv(tmp_path)
    done = install(tmp_path, bundle, venv)
    assert done.returncode == 0, done.stderr
    assert "murgat smoke --model tiny-omni --model tiny-vl" in calls(tmp_path)
    assert "--judge tiny-omni" in done.stdout
    (tmp_path / "calls").unlink()
    done = install(tmp_path, bundle, venv, "--smoke-all")
    assert done.returncode == 0, done.stderr
    assert "murgat smoke --model tiny-omni --model tiny-vl --model tiny-text" in calls(tmp_path)


def test_a_missing_model_file_stops_it_naming_the_file(tmp_path):
    bundle = make_bundle(tmp_path)
    gone = bundle / "models" / "vl" / "config.json"
    gone.unlink()
    venv = tmp_path / "fresh-venv"
    done = install(tmp_path, bundle, venv)
    assert done.returncode == 1
    assert f"{gone}: missing" in done.stderr and "cannot be installed here" in done.stderr
    assert not venv.exists() or not (venv / "bin" / "python").exists()


def test_a_failed_model_copy_stops_it_naming_the_step(tmp_path):
    bundle, venv = make_bundle(tmp_path), make_venv(tmp_path, place_fails=True)
    done = install(tmp_path, bundle, venv)
    assert done.returncode == 1
    assert 'step "copying the models" failed' in done.stderr and "disk full" in done.stderr
    assert not any(c.startswith("murgat") for c in calls(tmp_path))  # nothing after it ran
    assert "installed:" not in done.stderr


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(("sig", "rc"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_smoke_test_it_started(tmp_path, sig, rc):
    bundle, venv = make_bundle(tmp_path), make_venv(tmp_path)
    pids = tmp_path / "smoke-pids"
    proc = subprocess.Popen(
        ["bash", str(bundle / "install.sh"), str(venv)],
        env=env_for(tmp_path, SMOKE_HANGS=str(pids)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (pids.is_file() and pids.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        smoke, child = (int(p) for p in pids.read_text().split())
        assert _alive(smoke) and _alive(child)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while (_alive(smoke) or _alive(child)) and time.monotonic() < deadline:
            time.sleep(0.1)
        gone = not _alive(smoke) and not _alive(child)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in [int(p) for p in pids.read_text().split()] if pids.is_file() else []:
            if _alive(pid):  # never left behind, whatever the test found
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == rc
    assert 'during step "murgat smoke"' in err
    assert gone
