"""A bundle's checks on the box, before anything is installed: `python3.X tools/check.py OUT`.

Standard library only (it runs before the environment exists). Refuses, naming what is wrong,
a Python or platform the bundle was not made for and any file missing from the bundle or
different from its MANIFEST.json; names the Debian package of each shared library the wheels
need that the box lacks, and the features a missing program takes away. Exit 0 when the
bundle can be installed here, 1 otherwise (every problem printed, not only the first).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import pathlib
import platform
import re
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

_BLOCK = 1 << 22


def say(text: str) -> None:
    print(f"[install] {text}", file=sys.stderr, flush=True)


def check_runtime(info: dict) -> list[str]:
    problems = []
    want = info["python"]
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if have != want or sys.implementation.name != "cpython":
        problems.append(
            f"this bundle is for CPython {want}; {sys.executable} is "
            f"{sys.implementation.name} {have}"
        )
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", info["platform"])
    if m:
        glibc_need = (int(m.group(1)), int(m.group(2)))
        machine = m.group(3)
        if sys.platform != "linux" or platform.machine() != machine:
            problems.append(
                f"this bundle is for Linux on {machine} ({info['platform']}); this box is "
                f"{sys.platform} on {platform.machine()}"
            )
        else:
            libc, version = platform.libc_ver()
            parts = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
            if libc != "glibc" or len(parts) < 2 or parts < glibc_need:
                problems.append(
                    f"this bundle is for Linux with glibc {glibc_need[0]}.{glibc_need[1]} or "
                    f"newer ({info['platform']}); this box has {libc or 'no glibc'} {version}"
                )
    return problems


def check_libraries(info: dict) -> list[str]:
    problems = []
    for lib in info.get("libraries", []):
        try:
            ctypes.CDLL(lib["soname"])
        except OSError:
            problems.append(
                f"shared library {lib['soname']} is missing (needed by {lib['needed_by']}): "
                f"install the Debian package {lib['debian']}"
            )
    return problems


def check_tools(info: dict) -> None:
    for tool in info.get("tools", []):
        if shutil.which(tool["name"]) is None:
            say(
                f"note: {tool['name']} is not on PATH (Debian package {tool['debian']}); "
                f"without it: {tool['features']}"
            )


class _Progress:
    def __init__(self, total: int):
        self.total, self.done, self.shown = max(total, 1), 0, -1
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += n
            tenth = self.done * 100 // self.total
            if tenth != self.shown and (self.tty or tenth % 10 == 0):
                self.shown = tenth
                bar = "#" * (tenth // 4) + "." * (25 - tenth // 4)
                end = "\r" if self.tty and tenth < 100 else "\n"
                print(
                    f"[install] checking files [{bar}] {tenth:3d}% of {self.total / 1e9:.2f} GB",
                    end=end,
                    file=sys.stderr,
                    flush=True,
                )


def _sha256(path: pathlib.Path, progress: _Progress) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
            progress.add(len(block))
    return h.hexdigest()


def check_files(root: pathlib.Path, entries: list[dict]) -> list[str]:
    """Every file the manifest lists: there, its size, then its sha256 (several at once)."""
    problems, present = [], []
    for e in entries:
        path = root / e["path"]
        if not path.is_file():
            problems.append(f"{path}: missing (the manifest lists it)")
        elif path.stat().st_size != e["size"]:
            problems.append(
                f"{path}: {path.stat().st_size} bytes, the manifest says {e['size']} "
                "(cut short or changed)"
            )
        else:
            present.append(e)
    if problems:  # no point hashing a bundle already known to be incomplete
        return problems
    progress = _Progress(sum(e["size"] for e in present))
    workers = min(8, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = list(pool.map(lambda e: _sha256(root / e["path"], progress), present))
    for e, digest in zip(present, digests):
        if digest != e["sha256"]:
            problems.append(f"{root / e['path']}: its sha256 differs from the manifest's (changed)")
    return problems


def main(argv: list[str]) -> int:
    root = pathlib.Path(argv[0] if argv else pathlib.Path(__file__).parent.parent).resolve()
    try:
        data = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
        info = data["bundle"]
        entries = data["files"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        say(f"error: {root / 'MANIFEST.json'} is missing or not a bundle's manifest ({e})")
        return 1
    for entry in entries:
        if entry["path"].startswith("/") or ".." in entry["path"].split("/"):
            say(f"error: the manifest names a file outside the bundle: {entry['path']}")
            return 1
    problems = check_runtime(info)
    problems += check_libraries(info)
    if not problems:
        problems = check_files(root, entries)
    for problem in problems:
        say(f"error: {problem}")
    if problems:
        return 1
    check_tools(info)
    say(f"{len(entries)} files whole; {info['target']} bundle, Python {info['python']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
