"""MANIFEST.json: the files a set of model folders is made of, each with its size and sha256.

It lies beside the models (in the models root, the folder that holds the model folders) or in
a model folder itself. `murgat models --verify` checks folders against it; whatever copies
models from one machine to another writes it with `write_manifest`, so both read one format:

    {"format": "murgat-manifest", "version": 1,
     "files": [{"path": "tiny-gemma3/model.safetensors", "size": 2118136, "sha256": "..."}, ...]}

`path` is POSIX, relative to the manifest's own folder; files are sorted by it. sha256 (not the
identity's blake2b) so that `sha256sum` can check a copy without this package.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

MANIFEST = "MANIFEST.json"
FORMAT = "murgat-manifest"
VERSION = 1
_BLOCK = 1 << 22


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the manifest's folder
    size: int
    sha256: str


def sha256_file(path: pathlib.Path, on_bytes: Callable[[int], None] | None = None) -> str:
    """The sha256 of every byte of `path`; `on_bytes(n)` after each block read (progress)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
            if on_bytes is not None:
                on_bytes(len(block))
    return h.hexdigest()


def hash_files(
    paths: list[pathlib.Path],
    on_bytes: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> list[str]:
    """sha256 of each of `paths`, in order, several at a time (hashlib lets go of the GIL)."""
    workers = workers or min(8, os.cpu_count() or 1, max(len(paths), 1))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sha256") as pool:
        return list(pool.map(lambda p: sha256_file(p, on_bytes), paths))


def write_manifest(
    root: pathlib.Path,
    folders: Iterable[pathlib.Path] | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> pathlib.Path:
    """Write `root`/MANIFEST.json over every file under `folders` (each inside `root`; default:
    every folder in `root`); returns its path."""
    root = pathlib.Path(root)
    folders = (
        [pathlib.Path(f) for f in folders]
        if folders is not None
        else [p for p in root.iterdir() if p.is_dir()]
    )
    files = sorted(
        (p for f in folders for p in f.rglob("*") if p.is_file() and p.name != MANIFEST),
        key=lambda p: p.relative_to(root).as_posix(),
    )
    digests = hash_files(files, on_bytes)
    entries = [
        {"path": p.relative_to(root).as_posix(), "size": p.stat().st_size, "sha256": d}
        for p, d in zip(files, digests)
    ]
    target = root / MANIFEST
    tmp = target.with_name(MANIFEST + ".tmp")
    tmp.write_text(
        json.dumps({"format": FORMAT, "version": VERSION, "files": entries}, indent=1) + "\n",
        encoding="utf-8",
    )
    tmp.replace(target)
    return target


def read_manifest(path: pathlib.Path) -> list[Entry]:
    """The entries of a manifest; ValueError naming the manifest when it is not one."""
    try:
        data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable manifest ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"{path}: not a {FORMAT} version {VERSION} file")
    entries = []
    for item in data.get("files") or []:
        try:
            entry = Entry(str(item["path"]), int(item["size"]), str(item["sha256"]).lower())
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}: an entry without path, size and sha256: {item!r}") from None
        if entry.path.startswith("/") or ".." in entry.path.split("/"):
            raise ValueError(f"{path}: {entry.path!r} is outside the manifest's folder")
        entries.append(entry)
    return entries


def entries_for(folder: pathlib.Path) -> tuple[pathlib.Path, dict[pathlib.Path, Entry]] | None:
    """The manifest that covers `folder` (its own, else one beside it) and its entries for the
    files under `folder`, by absolute path; None where there is none."""
    folder = pathlib.Path(folder)
    for manifest, prefix in (
        (folder / MANIFEST, ""),
        (folder.parent / MANIFEST, folder.name + "/"),
    ):
        if manifest.is_file():
            found = {
                manifest.parent / e.path: e
                for e in read_manifest(manifest)
                if e.path.startswith(prefix)
            }
            if found or not prefix:
                return manifest, found
    return None
