"""The package as users get it: importing it changes nothing, and a regular wheel works on its own."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROMPTS = sorted(p.name for p in (ROOT / "prompts").glob("*.toml"))
PRESETS = sorted(p.stem for p in (ROOT / "models").glob("*.toml"))

IMPORT_ALL = """
import json, os, sys
before = dict(os.environ)
import murgat_local, murgat_local.pipeline.runner, murgat_local.judges, murgat_local.cli
after = dict(os.environ)
print(json.dumps({k: [before.get(k), after.get(k)] for k in before.keys() | after.keys()
                  if before.get(k) != after.get(k)}))
"""


def test_importing_the_package_leaves_the_environment_alone():
    from murgat_local.offline import OFFLINE_ENV

    # Without what the CLI (or conftest) would set, so a change on import would show.
    unset = {*OFFLINE_ENV, "VLLM_LOGGING_LEVEL"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(proc.stdout.splitlines()[-1]) == {}


def _build_wheel(tmp: pathlib.Path) -> pathlib.Path:
    # Built from a copy, so the build leaves no build/ or egg-info behind in the checkout.
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "prompts", "models"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "murgat_local",
        src / "murgat_local",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp / "dist"),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp / "dist").glob("murgat_local-*.whl")
    return wheel


def _fresh_env(tmp: pathlib.Path, wheel: pathlib.Path) -> pathlib.Path:
    """A new environment holding the wheel, and this environment's dependencies, but not its
    editable murgat_local: a plain path line in a .pth runs none of the .pth files in that folder."""
    env = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    pathlib.Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return env


def test_wheel_installs_and_runs_from_another_folder(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"murgat_local/prompts/{p}" for p in PROMPTS} <= names
    assert {f"murgat_local/presets/{p}.toml" for p in PRESETS} <= names

    env = _fresh_env(tmp_path, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "MURGAT_MODELS_DIR", "VIRTUAL_ENV")
    }
    run_env.update(
        XDG_DATA_HOME=str(tmp_path / "data"), COLUMNS="300"
    )  # rich would cut names at 80

    def run(*cmd):
        return subprocess.run(
            [str(c) for c in cmd], capture_output=True, text=True, cwd=elsewhere, env=run_env
        )

    where = run(
        env / "bin" / "python",
        "-c",
        "import murgat_local, murgat_local.engines.presets as p; print(murgat_local.__file__); "
        "print(p.DEFAULT_MODELS_ROOT)",
    )
    assert where.returncode == 0, where.stderr
    module_file, models_root = map(pathlib.Path, where.stdout.split())
    assert module_file.is_relative_to(env) and not module_file.is_relative_to(ROOT)
    assert models_root == tmp_path / "data" / "murgat-local" / "models"

    assert (env / "bin" / "murgat").read_text().splitlines()[0] == f"#!{env / 'bin' / 'python'}"
    listed = run(env / "bin" / "murgat", "models")
    assert listed.returncode == 0, listed.stderr
    assert all(name in listed.stdout for name in PRESETS)
    assert "engines (--engine): vllm, transformers, openai, replicas, ray" in listed.stdout

    responses = elsewhere / "responses.jsonl"
    responses.write_text(
        json.dumps(
            {
                "id": "a",
                "video": "v",
                "model_generation": "Reasoning: A red square fills the frame (visual, 0:01). So B.\nAnswer: B",
            }
        )
        + "\n"
    )
    seg = run(env / "bin" / "murgat", "segment", responses)
    assert seg.returncode == 0, seg.stderr
    (rec,) = [json.loads(line) for line in seg.stdout.splitlines()]
    assert [s["text"] for s in rec["sentences"]] == [
        "A red square fills the frame (visual, 0:01).",
        "So B.",
    ]
    assert rec["sentences"][0]["citations"][0]["start"] == 1 and rec["answer"] == "B"

    loads = run(
        env / "bin" / "python",
        "-c",
        "from murgat_local.judges import load_prompt; print(load_prompt('entail').digest)",
    )
    assert loads.returncode == 0, loads.stderr
