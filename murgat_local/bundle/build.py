"""`murgat bundle`: on a connected machine, everything an air-gapped box needs in one folder.

    OUT/wheels/          every wheel the target's lock pins, and this project's wheel
    OUT/requirements.txt the lock itself (pins and hashes: what install.sh installs)
    OUT/tools/           check.py and box.py (the box's checks, standard library only) and
                         set-up's patches
    OUT/models/NAME/     the model folders named, and with --test-models the local test models
    OUT/install.sh       `bash OUT/install.sh VENV` on the box (from install.sh.in)
    OUT/MANIFEST.json    every other file with its size and sha256; target, Python, the oldest
                         glibc every wheel allows, the CUDA release of torch and the NVIDIA
                         driver it needs, the space the wheels take installed, this project's
                         version and commit, when

A second run into the same OUT copies nothing that is already there with the right sha256, and
removes from wheels/ and models/ what this bundle no longer holds.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import shutil
import subprocess
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources

from ..engines import manifest as manifests
from ..engines.presets import PACKAGE_ROOT, ModelNotFound, available_presets, load_preset
from . import box
from .wheels import (
    BundleError,
    Pin,
    Target,
    build_project_wheel,
    from_wheelhouse,
    pip_download,
    read_lock,
)

OnBytes = Callable[[int], None]
_BLOCK = 1 << 22


@dataclass
class Bundle:
    out: pathlib.Path
    target: str
    python: str
    platform: str
    cuda: dict | None = None  # the CUDA release of torch and the driver series it needs
    wheels: int = 0
    models: list[dict] = field(default_factory=list)
    copied: int = 0  # files written this run
    kept: int = 0  # files already there with the right sha256
    bytes: int = 0  # every file of the bundle


def targets() -> dict:
    return tomllib.loads(resources.files(__package__).joinpath("targets.toml").read_text())


def checkout_root() -> pathlib.Path:
    """The checkout this package runs from: a bundle needs its locks and its sources."""
    if not (PACKAGE_ROOT / "pyproject.toml").is_file() or not (PACKAGE_ROOT / "locks").is_dir():
        raise BundleError(
            "murgat bundle runs from a checkout of murgat-local (it reads locks/ and builds the "
            f"project's wheel from its sources); {PACKAGE_ROOT} is not one"
        )
    return PACKAGE_ROOT


def _copy_hashing(src: pathlib.Path, dst: pathlib.Path, on_bytes: OnBytes | None) -> str:
    import hashlib

    h = hashlib.sha256()
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    with open(src, "rb") as fin, open(tmp, "wb") as fout:
        while block := fin.read(_BLOCK):
            h.update(block)
            fout.write(block)
            if on_bytes:
                on_bytes(len(block))
    tmp.replace(dst)
    return h.hexdigest()


class _Placer:
    """Puts files into the bundle, hashing each once, and skipping a copy already there."""

    def __init__(self, out: pathlib.Path, on_bytes: OnBytes | None):
        self.out = out
        self.on_bytes = on_bytes
        self.digests: dict[pathlib.Path, str] = {}
        self.copied = 0
        self.kept = 0

    def sha256(self, path: pathlib.Path) -> str:
        if path not in self.digests:
            self.digests[path] = manifests.sha256_file(path, self.on_bytes)
        return self.digests[path]

    def place(self, src: pathlib.Path, dst: pathlib.Path, sha: str | None = None) -> str:
        if dst.is_file() and dst.stat().st_size == src.stat().st_size:
            want = sha or self.sha256(src)
            if self.sha256(dst) == want:
                self.kept += 1
                return want
            del self.digests[dst]
        self.digests[dst] = _copy_hashing(src, dst, self.on_bytes)
        self.copied += 1
        return self.digests[dst]


def _download_hint(name: str) -> str:
    from ..engines.presets import download_command

    command = download_command(load_preset(name))
    return f"; download it on a connected machine:\n  {command}" if command else ""


def resolve_models(names: Iterable[str], test_models: bool) -> list[dict]:
    """Each model to carry: {"folder": its name in the bundle, "source": its path, "preset": the
    preset that names it (or None), "test": a local test model}. A preset whose folder is
    missing is a BundleError with the command that downloads it."""
    chosen: list[dict] = []

    def add(name: str, test: bool) -> None:
        try:
            preset = load_preset(name)
        except (ValueError, ModelNotFound) as e:
            raise BundleError(str(e)) from None
        is_preset = preset.source.endswith(".toml")
        if not (preset.path / "config.json").is_file():
            what = f"preset {name}: its folder {preset.path} is missing" if is_preset else ""
            raise BundleError(
                (what or f"{preset.path}: not a model folder (no config.json)")
                + (_download_hint(name) if is_preset else "")
            )
        # A preset's folder keeps the name its preset looks for under the models root (not
        # the name of wherever a variable pointed it on this machine).
        folder = load_preset(name, env={}).path.name if is_preset else preset.path.name
        entry = {
            "folder": folder,
            "source": preset.path.resolve(),
            "preset": preset.name if is_preset else None,
            "test": test,
            "modalities": sorted(preset.modalities),
        }
        for other in chosen:
            if other["source"] == entry["source"]:
                other["test"] = other["test"] or test
                return
            if other["folder"] == entry["folder"]:
                raise BundleError(
                    f"two model folders named {entry['folder']}: {other['source']} and "
                    f"{entry['source']}"
                )
        chosen.append(entry)

    for name in names:
        add(name, False)
    if test_models:
        for name in available_presets():
            preset = load_preset(name)
            if preset.local_test and (preset.path / "config.json").is_file():
                add(name, True)
    return chosen


def _commit(checkout: pathlib.Path) -> str | None:
    try:
        head = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("murgat-local")
    except PackageNotFoundError:
        return "unknown"


def build_bundle(
    out: pathlib.Path,
    target: str,
    python: str | None = None,
    models: Iterable[str] = (),
    test_models: bool = False,
    wheelhouses: Iterable[pathlib.Path] | None = None,
    on_bytes: OnBytes | None = None,
    on_step: Callable[[str], None] | None = None,
) -> Bundle:
    """Write the bundle for `target` into `out` (see the module's docstring)."""
    import sys

    step = on_step or (lambda _: None)
    known = targets()
    if target not in known:
        raise BundleError(f"unknown target {target!r}: one of {', '.join(sorted(known))}")
    spec = known[target]
    python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    checkout = checkout_root()
    if python not in spec["locks"]:
        served = ", ".join(spec["locks"])
        raise BundleError(
            f"--target {target} has locks for Python {served}, not {python}: pass --python "
            f"with one of those (the box then needs that python), or add a lock for it "
            "(scripts/lock.sh) and name it in murgat_local/bundle/targets.toml"
        )
    lock_name = spec["locks"][python]
    lock = checkout / lock_name
    glibc = tuple(int(x) for x in spec["glibc"].split("."))
    box_for = Target(python=python, machine=spec["machine"], glibc=(glibc[0], glibc[1]))
    rank = box_for.ranker()
    chosen = resolve_models(models, test_models)  # a missing model stops us before any download
    pins = read_lock(lock)
    if wheelhouses is None:
        wheelhouses = [checkout / ".local" / "wheels"]
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    placer = _Placer(out, on_bytes)
    log = pathlib.Path(tempfile.mkstemp(prefix="murgat-bundle-", suffix=".log")[1])

    # Wheels: from the wheelhouse where it has them for the target, pip download for the rest.
    wheels = out / "wheels"
    wheels.mkdir(exist_ok=True)
    step(
        f"wheels: {len(pins)} pinned in {lock_name}, for CPython {python} on {box_for.platforms[0]}"
    )
    have, refused = from_wheelhouse(
        pins, [pathlib.Path(w) for w in wheelhouses], placer.sha256, rank
    )
    if refused:
        step(
            f"{len(refused)} wheels of the wheelhouse are not for CPython {python} on glibc "
            f"{spec['glibc']} ({', '.join(p.name for p in refused[:3])}, ...): fetched instead"
        )
    for path in have.values():
        placer.place(path, wheels / path.name)
    missing = [p for p in pins if p.key not in have]
    if missing:
        step(f"pip download: {len(missing)} wheels (pip's configured sources; log {log})")
        before = {p.name for p in wheels.iterdir()}
        pip_download(missing, wheels, python, box_for.platforms, log)
        placer.copied += len({p.name for p in wheels.iterdir()} - before)
    step("this project's wheel")
    project_wheel = build_project_wheel(checkout, pathlib.Path(tempfile.mkdtemp()), log)
    placer.place(project_wheel, wheels / project_wheel.name)
    shutil.rmtree(project_wheel.parent, ignore_errors=True)
    if rank(project_wheel.name) is None:
        raise BundleError(f"{project_wheel.name}: not a wheel CPython {python} takes")
    chosen_wheels = {wheels / path.name for path in have.values()}
    for pin in missing:  # what pip fetched or found already there
        chosen_wheels.add(_best_fit(wheels, pin, rank, placer.sha256, python))
    keep = {wheels / project_wheel.name, *chosen_wheels}
    names = sorted(p.name for p in keep)
    try:
        need = box.floor(names)
    except ValueError as e:
        raise BundleError(f"the wheels are not for one platform: {e}") from None
    platform = box.platform_name(need)
    cuda = _torch_cuda(sorted(chosen_wheels))
    installed = sum(_unpacked_size(p) for p in keep)

    # The lock, the box's checks and set-up's patches.
    placer.place(lock, out / "requirements.txt")
    keep.add(out / "requirements.txt")
    tools = out / "tools"
    for tool in ("check.py", "box.py"):  # the box's checks, run before anything is installed
        with resources.as_file(resources.files(__package__).joinpath(tool)) as path:
            placer.place(path, tools / tool)
        keep.add(tools / tool)
    for patch in spec.get("patches", []):
        placer.place(checkout / patch, tools / pathlib.Path(patch).name)
        keep.add(tools / pathlib.Path(patch).name)

    # Models.
    for entry in chosen:
        step(f"model {entry['folder']} ({entry['source']})")
        for src in sorted(p for p in entry["source"].rglob("*") if p.is_file()):
            if src.name == manifests.MANIFEST:
                continue
            dst = out / "models" / entry["folder"] / src.relative_to(entry["source"])
            placer.place(src, dst)
            keep.add(dst)
    _remove_strays(out, keep)

    # install.sh and the manifest.
    model_rows = [{k: e[k] for k in ("folder", "preset", "test", "modalities")} for e in chosen]
    script = out / "install.sh"
    script.write_text(
        render_install(
            python=python,
            target=target,
            project_wheel=project_wheel.name,
            uninstall=spec.get("uninstall", []),
            patches=[pathlib.Path(p).name for p in spec.get("patches", [])],
        ),
        encoding="utf-8",
    )
    script.chmod(0o755)
    placer.digests.pop(script, None)
    step("manifest")
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != manifests.MANIFEST)
    entries: list[dict] = [
        {
            "path": p.relative_to(out).as_posix(),
            "size": p.stat().st_size,
            "sha256": placer.sha256(p),
        }
        for p in files
    ]
    data = {
        "format": manifests.FORMAT,
        "version": manifests.VERSION,
        "bundle": {
            "target": target,
            "python": python,
            "platform": platform,
            "cuda": cuda,
            "installed_bytes": installed,
            "project": {"name": "murgat-local", "version": _version(), "commit": _commit(checkout)},
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "lock": lock_name,
            "project_wheel": f"wheels/{project_wheel.name}",
            "models": model_rows,
            "libraries": spec.get("libraries", []),
            "tools": spec.get("tools", []),
        },
        "files": entries,
    }
    tmp = out / (manifests.MANIFEST + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / manifests.MANIFEST)
    log.unlink(missing_ok=True)
    return Bundle(
        out=out,
        target=target,
        python=python,
        platform=platform,
        cuda=cuda,
        wheels=sum(1 for e in entries if e["path"].startswith("wheels/")),
        models=model_rows,
        copied=placer.copied,
        kept=placer.kept,
        bytes=sum(e["size"] for e in entries),
    )


def _best_fit(
    wheels: pathlib.Path,
    pin: Pin,
    rank: Callable[[str], int | None],
    sha256: Callable[[pathlib.Path], str],
    python: str,
) -> pathlib.Path:
    """The wheel of `pin` in `wheels` that the target's pip would take (what pip download just
    chose; an earlier bundle's other builds are left to be removed)."""
    from .wheels import _wheel_key

    fits = []
    for path in wheels.glob("*.whl"):
        if _wheel_key(path.name) == (pin.key, pin.version):
            place = rank(path.name)
            if place is not None and sha256(path) in pin.hashes:
                fits.append((place, path.name, path))
    if not fits:
        raise BundleError(f"no wheel of {pin.name}=={pin.version} for CPython {python} here")
    return min(fits)[2]


def _torch_cuda(wheels: list[pathlib.Path]) -> dict | None:
    """{"version": the CUDA release the bundle's torch is built for, "driver": the NVIDIA driver
    series it needs}; None for a CPU torch or none."""
    from .wheels import _wheel_key

    for path in wheels:
        key = _wheel_key(path.name)
        if key is None or key[0] != "torch":
            continue
        with zipfile.ZipFile(path) as zf:
            try:
                text = zf.read("torch/version.py").decode("utf-8")
            except KeyError:
                raise BundleError(f"{path.name}: no torch/version.py inside") from None
        release = box.torch_cuda(text)
        if release is None:
            return None
        driver = box.needed_driver(release)
        if driver is None:
            raise BundleError(
                f"{path.name} is built for CUDA {release}, which murgat_local/bundle/"
                "drivers.toml does not list: add the driver series it needs (NVIDIA's table)"
            )
        return {"version": release, "driver": driver, "from": path.name}
    return None


def _unpacked_size(path: pathlib.Path) -> int:
    """What a wheel takes once installed: its files unpacked."""
    with zipfile.ZipFile(path) as zf:
        return sum(info.file_size for info in zf.infolist())


def _remove_strays(out: pathlib.Path, keep: set[pathlib.Path]) -> None:
    """Files of an earlier bundle into this folder that this one does not hold."""
    for folder in (out / "wheels", out / "models", out / "tools"):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*"), reverse=True):
            if path.is_file() and path not in keep:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()


def render_install(
    python: str, target: str, project_wheel: str, uninstall: list[str], patches: list[str]
) -> str:
    """install.sh from its template (install.sh.in): @NAME@ marks stand for the values."""
    template = resources.files(__package__).joinpath("install.sh.in").read_text(encoding="utf-8")
    values = {
        "PYTHON": python,
        "TARGET": target,
        "PROJECT_WHEEL": project_wheel,
        "UNINSTALL": " ".join(uninstall),
        "PATCHES": " ".join(patches),
    }
    for name, value in values.items():
        template = template.replace(f"@{name}@", value)
    return template


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


__all__ = ["Bundle", "BundleError", "build_bundle", "human"]
