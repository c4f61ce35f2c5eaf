"""What a box offers, read with the standard library only: the wheel tags its Python takes, the
glibc each wheel needs, and the NVIDIA driver it runs.

A bundle carries this file in tools/ beside check.py, which runs it with the box's own Python
before anything is installed (no `packaging` there yet); the installed package uses it too
(`murgat smoke`'s driver check, the bundle's glibc floor).
"""

from __future__ import annotations

import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tomllib

Tag = tuple[str, str, str]  # (interpreter, abi, platform), as a wheel's file name writes them

# The manylinux names from before PEP 600, and the glibc each stands for.
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_LEGACY_BY_GLIBC = {v: k for k, v in LEGACY_MANYLINUX.items()}
_PEP600 = re.compile(r"(manylinux|musllinux)_(\d+)_(\d+)_(\w+)")
_LEGACY = re.compile(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)")


# --- wheel tags -------------------------------------------------------------------------------


def wheel_tags(filename: str) -> set[Tag]:
    """Every tag a wheel's file name claims (its compressed tag sets expanded)."""
    name = pathlib.PurePath(filename).name
    if not name.endswith(".whl"):
        raise ValueError(f"{name}: not a wheel")
    parts = name[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        raise ValueError(f"{name}: not a wheel's file name (name-version[-build]-py-abi-platform)")
    pys, abis, plats = (p.split(".") for p in parts[-3:])
    return {(py, abi, plat) for py in pys for abi in abis for plat in plats}


def platform_need(tag: str) -> tuple[str, tuple[int, int], str] | None:
    """(libc, oldest version, machine) a platform tag needs; None for `any`; ValueError for a
    platform that names no libc (`linux_x86_64`: built for one machine, not portable)."""
    if tag == "any":
        return None
    if m := _PEP600.fullmatch(tag):
        libc = "glibc" if m.group(1) == "manylinux" else "musl"
        return libc, (int(m.group(2)), int(m.group(3))), m.group(4)
    if m := _LEGACY.fullmatch(tag):
        return "glibc", LEGACY_MANYLINUX[m.group(1)], m.group(2)
    raise ValueError(f"platform tag {tag!r} names no libc version (not a portable wheel)")


def wheel_need(tags: set[Tag]) -> tuple[str, tuple[int, int], str] | None:
    """The least a wheel needs of a box's libc: its most lenient platform tag (a wheel tagged
    `manylinux_2_27_x86_64.manylinux_2_28_x86_64` installs on glibc 2.27). None: any platform."""
    needs = []
    for _, _, plat in tags:
        need = platform_need(plat)
        if need is None:
            return None
        needs.append(need)
    return min(needs, key=lambda n: (n[0] != "glibc", n[1]))


def floor(filenames: list[str]) -> tuple[str, tuple[int, int], str] | None:
    """The oldest libc every one of these wheels allows: the highest of their own needs."""
    found: tuple[str, tuple[int, int], str] | None = None
    for name in filenames:
        need = wheel_need(wheel_tags(name))
        if need is None:
            continue
        if found is not None and (need[0], need[2]) != (found[0], found[2]):
            raise ValueError(
                f"{name}: built for {need[0]} on {need[2]}, the others for {found[0]} on {found[2]}"
            )
        if found is None or need[1] > found[1]:
            found = need
    return found


def platform_name(need: tuple[str, tuple[int, int], str] | None) -> str:
    """The platform tag that states a floor: `manylinux_2_31_x86_64`; `any` for none."""
    if need is None:
        return "any"
    libc, (major, minor), machine = need
    return f"{'manylinux' if libc == 'glibc' else 'musllinux'}_{major}_{minor}_{machine}"


def manylinux_platforms(glibc: tuple[int, int], machine: str) -> list[str]:
    """The manylinux platform tags a box with this glibc takes, the newest first (the legacy
    names beside their PEP 600 equals), as pip lists them for such a box."""
    out = []
    for minor in range(glibc[1], 4, -1):
        out.append(f"manylinux_{glibc[0]}_{minor}_{machine}")
        if (legacy := _LEGACY_BY_GLIBC.get((glibc[0], minor))) is not None:
            out.append(f"{legacy}_{machine}")
    return out


def python_tags(version: tuple[int, int], platforms: list[str]) -> set[Tag]:
    """The tags a CPython of `version` takes on `platforms`: its own ABI, the stable ABI of
    itself and every earlier 3.x, no ABI, and pure-Python wheels for 3.0 up to itself."""
    major, minor = version
    cp = f"cp{major}{minor}"
    tags: set[Tag] = set()
    for plat in platforms:
        tags |= {(cp, cp, plat), (cp, "none", plat)}
        tags |= {(f"cp{major}{m}", "abi3", plat) for m in range(2, minor + 1)}
        tags |= {(f"py{major}{m}", "none", plat) for m in range(minor + 1)}
        tags.add((f"py{major}", "none", plat))
    tags.add((cp, "none", "any"))
    tags |= {(f"py{major}{m}", "none", "any") for m in range(minor + 1)}
    tags.add((f"py{major}", "none", "any"))
    return tags


def glibc_version() -> tuple[int, int] | None:
    """This box's glibc (None on musl or another libc)."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        text = ""
    if not text.startswith("glibc "):
        libc, text = platform.libc_ver()
        if libc != "glibc":
            return None
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def box_tags() -> set[Tag]:
    """The tags this Python on this box takes (CPython on glibc Linux; pure wheels elsewhere)."""
    version = (sys.version_info.major, sys.version_info.minor)
    glibc = glibc_version()
    plats = (
        manylinux_platforms(glibc, platform.machine()) if sys.platform == "linux" and glibc else []
    )
    if sys.platform == "linux":
        plats.append(f"linux_{platform.machine()}")
    if sys.implementation.name != "cpython":
        return {t for t in python_tags(version, plats) if t[0].startswith("py")}
    return python_tags(version, plats)


# --- the NVIDIA driver --------------------------------------------------------------------------

PROC_VERSION = pathlib.Path("/proc/driver/nvidia/version")
_DRIVER = re.compile(r"\b(\d{3,})\.(\d+)(?:\.(\d+))?\b")


def parse_nvidia_smi(text: str) -> str | None:
    """The driver version from `nvidia-smi --query-gpu=driver_version --format=csv,noheader`
    (one line per GPU, the same on each)."""
    for line in text.splitlines():
        if m := _DRIVER.fullmatch(line.strip()):
            return m.group(0)
    return None


def parse_proc_version(text: str) -> str | None:
    """The driver version from /proc/driver/nvidia/version's `NVRM version:` line."""
    for line in text.splitlines():
        if line.startswith("NVRM version:") and (m := _DRIVER.search(line.split("Module", 1)[-1])):
            return m.group(0)
    return None


def read_driver(proc: pathlib.Path = PROC_VERSION) -> tuple[str | None, str]:
    """(this box's NVIDIA driver version or None, where it was read or looked for)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            done = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if done.returncode == 0 and (version := parse_nvidia_smi(done.stdout)):
                return version, "nvidia-smi"
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        version = parse_proc_version(proc.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        version = None
    if version:
        return version, str(proc)
    looked = "nvidia-smi failed" if smi else "no nvidia-smi on PATH"
    return None, f"{looked}, no {proc}"


def driver_table() -> dict[str, int]:
    """CUDA release -> the oldest driver series it runs on (drivers.toml beside this file)."""
    with open(pathlib.Path(__file__).with_name("drivers.toml"), "rb") as fh:
        return {str(k): int(v) for k, v in tomllib.load(fh)["cuda"].items()}


def needed_driver(cuda: str, table: dict[str, int] | None = None) -> int | None:
    """The driver series CUDA `cuda` ("13.0", "12.8") needs: its own row, else its major
    release's (a 13.x runs on 13's driver); None when the table does not know it."""
    table = driver_table() if table is None else table
    major_minor = ".".join(cuda.split(".")[:2])
    return table.get(major_minor, table.get(cuda.split(".")[0]))


def driver_problem(cuda: str, need: int, have: str | None, where: str) -> str | None:
    """Why a build for CUDA `cuda`, which needs driver series `need`, cannot run on a box whose
    driver is `have` (read from `where`); None when it can."""
    if have is None:
        return (
            f"no NVIDIA GPU: no driver found on this box ({where}), and this build is for "
            f"CUDA {cuda} (driver {need} or newer)"
        )
    if int(have.split(".")[0]) < need:
        return (
            f"this build is for CUDA {cuda}, which needs an NVIDIA driver of the {need} series "
            f"or newer; this box has driver {have} ({where}): install driver {need} or newer "
            "(the distribution's nvidia-driver package of that series, or NVIDIA's installer)"
        )
    return None


_TORCH_CUDA = re.compile(r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)


def torch_cuda(version_py: str) -> str | None:
    """The CUDA release torch was built for, from its torch/version.py (None: a CPU build)."""
    m = _TORCH_CUDA.search(version_py)
    return m.group(1) if m else None


def installed_torch_cuda() -> str | None:
    """The CUDA release of the torch installed beside this package, read without importing it
    (None: no torch, or a CPU build)."""
    from importlib import metadata

    try:
        found = metadata.distribution("torch").locate_file("torch/version.py")
        return torch_cuda(pathlib.Path(str(found)).read_text(encoding="utf-8"))
    except (metadata.PackageNotFoundError, OSError):
        return None
