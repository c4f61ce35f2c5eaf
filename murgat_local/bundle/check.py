"""A bundle's checks on the box, before anything is installed:
`python3.X tools/check.py OUT [--venv VENV] [--allow-no-gpu]`.

Standard library only (it runs before the environment exists; box.py lies beside it). Refuses,
naming what is wrong, a Python or glibc the bundle was not made for, a wheel whose tags this
Python does not take, an NVIDIA driver older than the bundle's CUDA needs (or none, unless
--allow-no-gpu), too little free space for the venv and the models, and any file missing from
the bundle or different from its MANIFEST.json; names the Debian package of each shared library
the wheels need that the box lacks, and the features a missing program takes away. Exit 0 when
the bundle can be installed here, 1 otherwise (every problem printed, not only the first).
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

try:
    from . import box
except ImportError:  # run as tools/check.py on the box, box.py beside it
    import importlib

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    box = importlib.import_module("box")

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
            glibc = box.glibc_version()
            if glibc is None or glibc < glibc_need:
                shown = f"glibc {glibc[0]}.{glibc[1]}" if glibc else "no glibc"
                problems.append(
                    f"this bundle's wheels need glibc {glibc_need[0]}.{glibc_need[1]} or newer "
                    f"({info['platform']}); this box has {shown}"
                )
    return problems


def check_wheel_tags(root: pathlib.Path, entries: list[dict]) -> list[str]:
    """Every wheel of the bundle is one this Python on this box installs (its tags)."""
    takes = box.box_tags()
    problems = []
    for e in entries:
        if not (e["path"].startswith("wheels/") and e["path"].endswith(".whl")):
            continue
        name = e["path"].rsplit("/", 1)[1]
        try:
            tags = box.wheel_tags(name)
        except ValueError as err:
            problems.append(str(err))
            continue
        if not tags & takes:
            shown = ", ".join(sorted("-".join(t) for t in tags)[:3])
            problems.append(
                f"{root / e['path']}: built for {shown}; this box's Python "
                f"{sys.version_info.major}.{sys.version_info.minor} takes none of its tags"
            )
    return problems


def check_driver(info: dict, allow_no_gpu: bool) -> list[str]:
    """A CUDA bundle's NVIDIA driver: the series its torch needs, or newer."""
    cuda = info.get("cuda")
    if not cuda:
        return []
    have, where = box.read_driver()
    problem = box.driver_problem(cuda["version"], int(cuda["driver"]), have, where)
    if problem is None:
        say(f"NVIDIA driver {have} ({where}): CUDA {cuda['version']} needs {cuda['driver']}+")
        return []
    if have is None:
        advice = (
            "this box can run the CPU route only (a bundle made with `murgat bundle OUT "
            f"--target cpu`), or install NVIDIA driver {cuda['driver']} or newer"
        )
        if allow_no_gpu:
            say(f"note: {problem}; installing anyway (--allow-no-gpu): no engine starts here")
            return []
        return [f"{problem}: {advice}; --allow-no-gpu installs it anyway"]
    return [problem]


def models_root(env: dict) -> pathlib.Path:
    """Where the installed murgat keeps models (engines.presets' rule, outside a checkout)."""
    if env.get("MURGAT_MODELS_DIR"):
        return pathlib.Path(env["MURGAT_MODELS_DIR"])
    data_home = env.get("XDG_DATA_HOME") or pathlib.Path.home() / ".local" / "share"
    return pathlib.Path(data_home) / "murgat-local" / "models"


def _existing(path: pathlib.Path) -> pathlib.Path:
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return path


def check_space(
    info: dict, entries: list[dict], venv: pathlib.Path, root: pathlib.Path
) -> list[str]:
    """Free space for the unpacked wheels (in the venv) and the model files not yet in the
    models root, summed where both lie on one filesystem."""
    needs: dict[int, list] = {}

    def need(where: pathlib.Path, what: str, n: int) -> None:
        place = _existing(where)
        row = needs.setdefault(place.stat().st_dev, [place, 0, []])
        row[1] += n
        row[2].append(f"{what} {n / 1e9:.1f} GB")

    if not (venv / "bin" / "python").exists():
        need(venv, f"the venv {venv}", int(info.get("installed_bytes", 0)))
    models = 0
    for e in entries:
        if e["path"].startswith("models/"):
            there = root / e["path"][len("models/") :]
            if not (there.is_file() and there.stat().st_size == e["size"]):
                models += e["size"]
    if models:
        need(root, f"the models in {root}", models)
    problems = []
    for place, total, parts in needs.values():
        free = shutil.disk_usage(place).free
        if free < total:
            problems.append(
                f"not enough free space on the filesystem of {place}: {total / 1e9:.1f} GB "
                f"needed ({', '.join(parts)}), {free / 1e9:.1f} GB free; "
                f"{(total - free) / 1e9:.1f} GB missing"
            )
    return problems


def check_libraries(info: dict, without_driver: bool = False) -> list[str]:
    """The shared libraries the wheels link to; `without_driver`: not those the NVIDIA driver
    brings (a CUDA bundle installed on a box with no GPU, --allow-no-gpu)."""
    problems = []
    for lib in info.get("libraries", []):
        if without_driver and lib.get("driver"):
            continue
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
    import argparse

    parser = argparse.ArgumentParser(prog="check.py")
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).parent.parent)
    parser.add_argument("--venv", type=pathlib.Path, help="where the venv goes (free space)")
    parser.add_argument("--allow-no-gpu", action="store_true")
    args = parser.parse_args(argv)
    root = pathlib.Path(args.root).resolve()
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
    problems += check_wheel_tags(root, entries)
    problems += check_driver(info, args.allow_no_gpu)
    problems += check_libraries(info, without_driver=args.allow_no_gpu)
    if args.venv is not None:
        problems += check_space(info, entries, args.venv, models_root(dict(os.environ)))
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
