"""What `murgat smoke --reach` found on this machine, kept beside the models for `murgat models`.

One JSON file in the folder that holds the model folders (`RECORD`): per model name, the folder
it was found for, a stamp of that folder's files (names, sizes, modification times: a stat each,
so `murgat models` stays instant for a 60 GB model), and per modality and engine whether the
modality moved the output and the date. A record whose stamp no longer matches the folder (the
weights were replaced) counts as never made.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import pathlib
import tempfile
from collections.abc import Sequence

from ..engines.folder import read_object

RECORD = ".murgat-reach.json"
VERIFIED, NOT_REACHED, NOT_VERIFIED = "verified", "did not reach", "not verified"


def record_path(model_folder: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(model_folder).parent / RECORD


def folder_stamp(folder: pathlib.Path) -> str | None:
    """A digest of the folder's files (relative name, size, mtime); None when it is absent."""
    folder = pathlib.Path(folder).resolve()
    if not folder.is_dir():
        return None
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()
        h.update(f"{path.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def record_reach(
    name: str,
    folder: pathlib.Path,
    engine: str,
    rows: Sequence[dict],
    today: datetime.date | None = None,
) -> pathlib.Path:
    """Add the rows' outcomes (`moved` True or False; rows that could not be probed are left
    out) for `engine` to the record beside `folder`; returns the record's path."""
    path = record_path(folder)
    data = read_object(path)
    stamp = folder_stamp(folder)
    entry = data.get(name)
    if not isinstance(entry, dict) or entry.get("stamp") != stamp:
        entry = {"path": str(pathlib.Path(folder).resolve()), "stamp": stamp, "modalities": {}}
    date = (today or datetime.date.today()).isoformat()
    for row in rows:
        if isinstance(row.get("moved"), bool):
            entry["modalities"].setdefault(row["modality"], {})[engine] = {
                "reached": row["moved"],
                "date": date,
            }
    data[name] = entry
    # Written whole, then moved into place: a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=RECORD + ".")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
    os.replace(tmp, path)
    return path


def reach_status(name: str, folder: pathlib.Path, modalities: Sequence[str]) -> dict[str, dict]:
    """Per modality (those given, then any other on record): `state` (VERIFIED when some engine
    saw it move the output, NOT_REACHED when engines probed it and none did, else NOT_VERIFIED),
    the latest `date` and the `engines` behind that state, and `text` as `murgat models` shows it."""
    entry = read_object(record_path(folder)).get(name)
    found: dict = {}
    if (
        isinstance(entry, dict)
        and entry.get("stamp") is not None
        and entry.get("stamp") == folder_stamp(folder)
    ):
        found = entry.get("modalities") or {}
    out = {}
    for modality in [*modalities, *(m for m in found if m not in modalities)]:
        by_engine = found.get(modality) or {}
        for state, reached in ((VERIFIED, True), (NOT_REACHED, False)):
            engines = sorted(e for e, v in by_engine.items() if v.get("reached") is reached)
            if engines:
                date = max(by_engine[e]["date"] for e in engines)
                out[modality] = {
                    "state": state,
                    "date": date,
                    "engines": engines,
                    "text": f"{state} {date} ({', '.join(engines)})",
                }
                break
        else:
            out[modality] = {
                "state": NOT_VERIFIED,
                "date": None,
                "engines": [],
                "text": NOT_VERIFIED,
            }
    return out
