"""The wheels of a bundle: every package a lock pins, for the target's Python and platform, and
this project's own wheel.

A wheel already in a local wheelhouse (scripts/setup.sh keeps what it downloads in
`.local/wheels`) whose tags the target takes and whose sha256 the lock allows is copied from
there; the rest are fetched by `pip download` for the target's Python and platforms, with pip's
own configuration (its indexes, find-links folders and constraints), so the bundle sees the
package sources set-up sees. The lock lists the hashes of every build of a version, so a hash
alone would let a Python 3.11 wheel into a 3.12 bundle: the tags decide.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from . import box

_REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)\s*(;[^\\]*)?")
_HASH = re.compile(r"--hash=sha256:([0-9a-fA-F]{64})")


class BundleError(RuntimeError):
    """What stops a bundle, said for the person running it."""


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    hashes: frozenset[str]
    line: str  # the requirement as the lock writes it, without its hashes

    @property
    def key(self) -> str:
        return normalize(self.name)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: pathlib.Path) -> list[Pin]:
    """The pins of a hashed requirements file (`uv pip compile --generate-hashes`, pip-tools)."""
    pins: list[Pin] = []
    current: tuple[str, str, str] | None = None
    hashes: set[str] = set()

    def close() -> None:
        if current is not None:
            if not hashes:
                raise BundleError(f"{path}: {current[0]}=={current[1]} has no --hash")
            pins.append(Pin(current[0], current[1], frozenset(hashes), current[2]))

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if not raw[0].isspace():
            close()
            hashes = set()
            m = _REQUIREMENT.match(line)
            if m is None:
                raise BundleError(f"{path}: not a pinned requirement: {raw.strip()}")
            marker = (m.group(4) or "").strip()
            current = (m.group(1), m.group(3), f"{m.group(1)}=={m.group(3)} {marker}".strip())
        hashes.update(h.lower() for h in _HASH.findall(line))
    close()
    return pins


def _wheel_key(filename: str) -> tuple[str, str] | None:
    """(normalized name, version) of a wheel file's name."""
    parts = filename[: -len(".whl")].split("-") if filename.endswith(".whl") else []
    return (normalize(parts[0]), parts[1]) if len(parts) >= 5 else None


@dataclass(frozen=True)
class Target:
    """The box a bundle is for: CPython `python` ("3.12") on Linux on `machine` with glibc
    `glibc` or newer."""

    python: str
    machine: str
    glibc: tuple[int, int]

    @property
    def platforms(self) -> list[str]:
        """pip download's --platform tags, the most preferred first."""
        return box.manylinux_platforms(self.glibc, self.machine)

    def tags(self) -> list[box.Tag]:
        """Every tag this box's pip takes, in pip's order of preference (`packaging.tags`)."""
        from packaging import tags

        major, minor = (int(x) for x in self.python.split("."))
        cp = f"cp{major}{minor}"
        found = [
            *tags.cpython_tags(python_version=(major, minor), abis=[cp], platforms=self.platforms),
            *tags.compatible_tags(
                python_version=(major, minor), interpreter=cp, platforms=self.platforms
            ),
        ]
        return [(t.interpreter, t.abi, t.platform) for t in found]

    def ranker(self) -> Callable[[str], int | None]:
        """rank(wheel file name): the place of its best tag in pip's preference (lower is
        better), None when the target takes none of its tags."""
        order: dict[box.Tag, int] = {}
        for i, tag in enumerate(self.tags()):
            order.setdefault(tag, i)

        def rank(filename: str) -> int | None:
            try:
                places = [order[t] for t in box.wheel_tags(filename) if t in order]
            except ValueError:
                return None
            return min(places) if places else None

        return rank


def from_wheelhouse(
    pins: list[Pin],
    wheelhouses: list[pathlib.Path],
    sha256: Callable[[pathlib.Path], str],
    rank: Callable[[str], int | None],
) -> tuple[dict[str, pathlib.Path], list[pathlib.Path]]:
    """For each pin, the wheel in the wheelhouses that the target takes (`rank` not None), with
    a sha256 the lock allows, and the best rank among such: ({key: path}, the wheels of a pinned
    version the target does not take). `sha256(path)` hashes a file (the caller's, with its
    progress)."""
    wanted = {(p.key, p.version): p for p in pins}
    found: dict[str, tuple[int, pathlib.Path]] = {}
    refused: list[pathlib.Path] = []
    for folder in wheelhouses:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            key = _wheel_key(path.name)
            pin = wanted.get(key) if key else None
            if pin is None:
                continue
            place = rank(path.name)
            if place is None:
                refused.append(path)
                continue
            if pin.key in found and found[pin.key][0] <= place:
                continue
            if sha256(path) in pin.hashes:
                found[pin.key] = (place, path)
    return {key: path for key, (_, path) in found.items()}, refused


def pip_download(
    pins: list[Pin], dest: pathlib.Path, python: str, platforms: list[str], log: pathlib.Path
) -> None:
    """`pip download` of `pins` (hashes required, no dependencies: the lock is the whole set) for
    `python` on `platforms` (most preferred first), with pip's configuration, into `dest`. A
    file already in `dest` with an allowed hash is not fetched again."""
    if not pins:
        return
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        for pin in pins:
            fh.write(pin.line + " " + " ".join(f"--hash=sha256:{h}" for h in sorted(pin.hashes)))
            fh.write("\n")
        requirements = fh.name
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--require-hashes",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        *[arg for tag in platforms for arg in ("--platform", tag)],
        "--dest",
        str(dest),
        "-r",
        requirements,
    ]
    try:
        with log.open("a", encoding="utf-8") as out:
            out.write("$ " + " ".join(command) + "\n")
            out.flush()
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    finally:
        os.unlink(requirements)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8").splitlines()[-15:])
        raise BundleError(
            f"pip download failed (exit {done.returncode}); the end of {log}:\n{tail}"
        )


# What the project's wheel is built from: copied to a scratch folder first, so that building
# leaves nothing (build/, *.egg-info) in the checkout. The links in murgat_local/ stay links.
_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "murgat_local", "models", "prompts")


def build_project_wheel(
    checkout: pathlib.Path, dest: pathlib.Path, log: pathlib.Path
) -> pathlib.Path:
    """This project's wheel, built offline from the checkout (setuptools from this environment,
    no build isolation, no index), into `dest`; returns its path."""
    with tempfile.TemporaryDirectory(prefix="murgat-wheel-") as scratch:
        src = pathlib.Path(scratch) / "src"
        src.mkdir()
        for name in _SOURCES:
            path = checkout / name
            if path.is_dir():
                shutil.copytree(
                    path,
                    src / name,
                    symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
                )
            elif path.is_file():
                shutil.copy2(path, src / name)
        out = pathlib.Path(scratch) / "wheel"
        command = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(out),
            str(src),
        ]
        # The same bytes from the same sources: every entry of the wheel dated 1980-01-01, so a
        # second bundle of an unchanged checkout finds its wheel already there.
        env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "SOURCE_DATE_EPOCH": "315532800"}
        with log.open("a", encoding="utf-8") as fh:
            fh.write("$ " + " ".join(command) + "\n")
            fh.flush()
            done = subprocess.run(command, stdout=fh, stderr=subprocess.STDOUT, env=env)
        built = sorted(out.glob("*.whl"))
        if done.returncode != 0 or len(built) != 1:
            raise BundleError(f"building this project's wheel failed; see {log}")
        dest.mkdir(parents=True, exist_ok=True)
        target = dest / built[0].name
        shutil.copyfile(built[0], target)
        return target
