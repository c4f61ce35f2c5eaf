"""The CPU bundle: its size, the time to build it (from set-up's wheelhouse, with the test
models) and the time of the offline install (`unshare -rn`: a network namespace with only
loopback), into a fresh venv, smoke skipped.

    .venv/bin/python scripts/bench_bundle.py [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def offline(command: str, env: dict | None = None) -> float:
    started = time.monotonic()
    subprocess.run(
        ["unshare", "-rn", "bash", "-c", f"ip link set lo up && {command}"],
        cwd="/",
        env=env,
        check=True,
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, help="work folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the bundle and the venv")
    args = parser.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    work = args.out or pathlib.Path(tempfile.mkdtemp(prefix="murgat-bench-bundle-"))
    out, venv, home = work / "bundle", work / "venv", work / "home"
    for path in (out, venv, home):
        shutil.rmtree(path, ignore_errors=True)
    home.mkdir(parents=True)
    murgat = ROOT / ".venv" / "bin" / "murgat"
    build = offline(f"{murgat} bundle {out} --target cpu --test-models >/dev/null")
    again = offline(f"{murgat} bundle {out} --target cpu --test-models >/dev/null")
    files = json.loads((out / "MANIFEST.json").read_text())["files"]
    wheels = sum(f["size"] for f in files if f["path"].startswith("wheels/"))
    models = sum(f["size"] for f in files if f["path"].startswith("models/"))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    install = offline(f"bash {out}/install.sh {venv} --no-smoke >/dev/null", env)
    print(
        f"CPU bundle: {(wheels + models) / 1e9:.2f} GB ({len(files)} files: wheels "
        f"{wheels / 1e9:.2f} GB, test models {models / 1e9:.2f} GB)\n"
        f"build: {build:.0f} s (a second run into the same folder: {again:.0f} s)\n"
        f"offline install (check every file, venv, models, models --verify): {install:.0f} s"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
