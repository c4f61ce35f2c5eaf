"""A bundle takes only wheels its box's Python installs: the tag check at bundle time (a fake
wheelhouse and a fake index holding cp311 and cp312 builds of one version, fetched with the real
`pip download`), the glibc floor MANIFEST.json names, and the box's own tag set against
`packaging.tags`, an independent implementation."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest
from packaging import tags as ptags

from murgat_local.bundle import box, build, check
from murgat_local.bundle.wheels import Pin, Target, from_wheelhouse

MACHINE = "x86_64"


def make_wheel(folder: pathlib.Path, name: str, version: str, tag: str) -> pathlib.Path:
    """A tiny valid wheel (METADATA, WHEEL, RECORD) named for `tag` (`cp312-cp312-PLATFORM`)."""
    path = folder / f"{name}-{version}-{tag}.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}/__init__.py", f"BUILD = {tag!r}\n")
        zf.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        zf.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
        zf.writestr(f"{info}/RECORD", "")
    return path


def sha(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pin_for(*wheels: pathlib.Path) -> Pin:
    """The lock's pin of these builds: as uv writes it, every build's hash."""
    name, version = wheels[0].name.split("-")[:2]
    return Pin(name, version, frozenset(sha(w) for w in wheels), f"{name}=={version}")


# --- the floor: the oldest glibc every wheel allows ---------------------------------------------


@pytest.mark.parametrize(
    ("names", "floor"),
    [
        (["a-1-cp312-cp312-manylinux_2_34_x86_64.whl", "b-1-py3-none-any.whl"], "2.34"),
        (
            ["a-1-cp39-abi3-manylinux_2_31_x86_64.whl", "b-1-cp312-cp312-manylinux1_x86_64.whl"],
            "2.31",
        ),
        (["a-1-cp312-cp312-manylinux2010_x86_64.whl"], "2.12"),
        (["a-1-cp312-cp312-manylinux1_x86_64.whl"], "2.5"),
        # A wheel tagged for two glibcs installs on the older.
        (["a-1-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"], "2.27"),
        (["a-1-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"], "2.17"),
    ],
)
def test_floor_is_the_highest_of_each_wheels_least_need(names, floor):
    major, minor = (int(x) for x in floor.split("."))
    assert box.floor(names) == ("glibc", (major, minor), MACHINE)
    assert box.platform_name(box.floor(names)) == f"manylinux_{major}_{minor}_{MACHINE}"


def test_floor_of_pure_wheels_is_any_and_a_machine_tag_is_refused():
    assert box.platform_name(box.floor(["a-1-py3-none-any.whl"])) == "any"
    with pytest.raises(ValueError, match="not a portable wheel"):
        box.floor(["a-1-cp312-cp312-linux_x86_64.whl"])


# --- the box's tags against packaging.tags -------------------------------------------------------


def test_box_tags_equal_packaging_sys_tags_here():
    theirs = {(t.interpreter, t.abi, t.platform) for t in ptags.sys_tags()}
    assert box.box_tags() == theirs


@pytest.mark.parametrize("version", [(3, 11), (3, 12), (3, 13)])
@pytest.mark.parametrize("glibc", [(2, 17), (2, 28), (2, 31)])
def test_python_tags_equal_packagings_for_another_python_and_glibc(version, glibc):
    plats = box.manylinux_platforms(glibc, MACHINE)
    cp = f"cp{version[0]}{version[1]}"
    theirs = {
        (t.interpreter, t.abi, t.platform)
        for t in [
            *ptags.cpython_tags(python_version=version, abis=[cp], platforms=plats),
            *ptags.compatible_tags(python_version=version, interpreter=cp, platforms=plats),
        ]
    }
    assert box.python_tags(version, plats) == theirs
    assert (f"manylinux_{glibc[0]}_{glibc[1]}_{MACHINE}" in plats) and "linux_x86_64" not in plats


# --- the wheelhouse: cp311 and cp312 builds of one version ---------------------------------------


@pytest.fixture
def builds(tmp_path):
    house = tmp_path / "wheelhouse"
    house.mkdir()
    cp311 = make_wheel(house, "fakepkg", "1.0", f"cp311-cp311-manylinux_2_17_{MACHINE}")
    cp312 = make_wheel(house, "fakepkg", "1.0", f"cp312-cp312-manylinux_2_28_{MACHINE}")
    return house, cp311, cp312


def test_wheelhouse_gives_each_python_its_own_build(builds):
    house, cp311, cp312 = builds
    pin = pin_for(cp311, cp312)
    for python, want, other in (("3.12", cp312, cp311), ("3.11", cp311, cp312)):
        target = Target(python=python, machine=MACHINE, glibc=(2, 31))
        found, refused = from_wheelhouse([pin], [house], sha, target.ranker())
        assert found == {"fakepkg": want} and refused == [other]


def test_a_build_needing_a_newer_glibc_than_the_target_is_refused(builds, tmp_path):
    house, cp311, cp312 = builds
    newer = make_wheel(house, "fakepkg", "1.0", f"cp312-cp312-manylinux_2_34_{MACHINE}")
    pin = pin_for(cp311, cp312, newer)
    target = Target(python="3.12", machine=MACHINE, glibc=(2, 31))
    found, refused = from_wheelhouse([pin], [house], sha, target.ranker())
    assert found == {"fakepkg": cp312} and set(refused) == {cp311, newer}
    # A box with glibc 2.34 prefers the newer build, as its pip would.
    target = Target(python="3.12", machine=MACHINE, glibc=(2, 34))
    found, _ = from_wheelhouse([pin], [house], sha, target.ranker())
    assert found == {"fakepkg": newer}


def _fake_checkout(tmp_path, pins_of: list) -> pathlib.Path:
    checkout = tmp_path / "checkout"
    (checkout / "locks").mkdir(parents=True)
    lines = []
    for group in pins_of:
        pin = pin_for(*group) if isinstance(group, tuple) else pin_for(group)
        lines.append(f"{pin.name}=={pin.version} \\")
        lines += [f"    --hash=sha256:{h} \\" for h in sorted(pin.hashes)]
        lines[-1] = lines[-1].rstrip(" \\")
    (checkout / "locks" / "fake.txt").write_text("\n".join(lines) + "\n")
    return checkout


def test_bundle_for_312_fetches_the_cp312_build_and_names_its_floor(builds, tmp_path, monkeypatch):
    """Set-up's wheelhouse has only the cp311 build; the index has cp312 builds for glibc 2.17
    and 2.34: the 3.12 bundle copies nothing from the wheelhouse and fetches (real pip
    download) the build a glibc-2.31 box takes; MANIFEST names glibc 2.17."""
    house, cp311, cp312 = builds
    cp312.unlink()
    index = tmp_path / "index"
    index.mkdir()
    old = make_wheel(index, "fakepkg", "1.0", f"cp312-cp312-manylinux2014_{MACHINE}")
    new = make_wheel(index, "fakepkg", "1.0", f"cp312-cp312-manylinux_2_34_{MACHINE}")
    pure = make_wheel(house, "purepkg", "2.0", "py3-none-any")
    checkout = _fake_checkout(tmp_path, [(cp311, old, new), pure])
    spec = {"locks": {"3.12": "locks/fake.txt"}, "machine": MACHINE, "glibc": "2.31"}
    monkeypatch.setattr(build, "targets", lambda: {"fake": spec})
    monkeypatch.setattr(build, "checkout_root", lambda: checkout)

    def project_wheel(checkout, dest, log):
        dest.mkdir(parents=True, exist_ok=True)
        return make_wheel(dest, "murgat_local", "0.0", "py3-none-any")

    monkeypatch.setattr(build, "build_project_wheel", project_wheel)
    # pip download sees only the fake index: no configuration, no network.
    for name in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    steps: list[str] = []
    out = tmp_path / "bundle"
    made = build.build_bundle(out, "fake", python="3.12", wheelhouses=[house], on_step=steps.append)
    names = sorted(p.name for p in (out / "wheels").iterdir())
    assert names == sorted([old.name, pure.name, "murgat_local-0.0-py3-none-any.whl"])
    assert any("not for CPython 3.12" in s and cp311.name in s for s in steps), steps
    info = json.loads((out / "MANIFEST.json").read_text())["bundle"]
    assert made.platform == info["platform"] == f"manylinux_2_17_{MACHINE}"
    assert info["cuda"] is None and info["installed_bytes"] > 0

    # On a box: the box's Python (3.11 here) takes none of the 3.12 wheel's tags.
    problems = check.check_wheel_tags(out, json.loads((out / "MANIFEST.json").read_text())["files"])
    if sys.version_info[:2] != (3, 12):
        assert len(problems) == 1 and old.name in problems[0] and "takes none" in problems[0]


def test_check_on_the_box_refuses_a_wheel_for_another_python(tmp_path):
    here = f"cp{sys.version_info.major}{sys.version_info.minor}"
    other = "cp399"
    entries = [
        {"path": f"wheels/a-1-{here}-{here}-manylinux_2_17_{MACHINE}.whl"},
        {"path": f"wheels/b-1-{other}-{other}-manylinux_2_17_{MACHINE}.whl"},
        {"path": "wheels/c-1-py3-none-any.whl"},
        {"path": "models/x/config.json"},
    ]
    problems = check.check_wheel_tags(tmp_path, entries)
    assert len(problems) == 1 and f"b-1-{other}" in problems[0]


def test_the_box_script_runs_with_the_standard_library_alone(tmp_path):
    """tools/check.py imports box.py beside it, with no package and no site-packages."""
    tools = tmp_path / "tools"
    tools.mkdir()
    src = pathlib.Path(check.__file__).parent
    for name in ("check.py", "box.py"):
        (tools / name).write_bytes((src / name).read_bytes())
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(tools / "check.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "MANIFEST.json is missing" in done.stderr, done.stderr


def _torch_wheel(folder: pathlib.Path, cuda: str | None) -> pathlib.Path:
    path = folder / f"torch-2.13.0-cp312-cp312-manylinux_2_28_{MACHINE}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "torch/version.py",
            "from typing import Optional\n__version__ = '2.13.0'\n"
            f"cuda: Optional[str] = {cuda!r}\ngit_version = 'x'\n",
        )
    return path


def test_manifest_cuda_and_driver_come_from_the_torch_wheel(tmp_path):
    other = make_wheel(tmp_path, "numpy", "2.3.5", f"cp312-cp312-manylinux_2_28_{MACHINE}")
    wheel = _torch_wheel(tmp_path, "13.0")
    assert build._torch_cuda([other, wheel]) == {
        "version": "13.0",
        "driver": 580,
        "from": wheel.name,
    }
    assert build._torch_cuda([_torch_wheel(tmp_path, "12.8")])["driver"] == 570
    assert build._torch_cuda([_torch_wheel(tmp_path, None)]) is None  # a CPU torch
    with pytest.raises(build.BundleError, match="drivers.toml does not list"):
        build._torch_cuda([_torch_wheel(tmp_path, "12.7")])
