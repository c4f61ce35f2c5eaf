"""Video-MMMU as released: three configs of parquet shards, videos in discipline folders.

`<Config>/test-*.parquet` for the configs Perception, Comprehension and Adaptation; rows carry
`id` (`validation_<Subject>_<n>`), `question`, `options` (a list), `answer`, `question_type`, and
on Adaptation an `image` (bytes and path) that the question calls `<image 1>`. A row's video is
`<Discipline>/<id>.mp4`, the discipline chosen by the subject inside the id. The same video is
asked about in every track, so a question's id is `<track>/<id>`.

Quirks handled: `question_type` "None" on a row that has options (options decide), open
questions whose answers are text or numbers, option texts with their own letter ("(A) ..."),
and `__MACOSX` folders and `._*` files from archives (ignored).
"""

from __future__ import annotations

import hashlib
import pathlib
import re
from collections.abc import Iterator
from typing import Any

from ..datasets import LETTERS, DatasetImage, Invalid
from ..jsontext import Unparsed

TRACKS = ("Perception", "Comprehension", "Adaptation")
DISCIPLINES = {
    "Art": ("Art", "Art_Theory", "Design", "Music"),
    "Science": ("Biology", "Chemistry", "Geography", "Math", "Physics"),
    "Humanities": ("History", "Literature", "Sociology", "Psychology"),
    "Engineering": (
        "Agriculture",
        "Architecture_and_Engineering",
        "Computer_Science",
        "Electronics",
        "Energy_and_Power",
        "Materials",
        "Mechanical_Engineering",
    ),
    "Medicine": (
        "Basic_Medical_Science",
        "Clinical_Medicine",
        "Diagnostics_and_Laboratory_Medicine",
        "Pharmacy",
        "Public_Health",
    ),
    "Business": ("Accounting", "Economics", "Finance", "Manage", "Marketing"),
}
DISCIPLINE_OF = {subject: d for d, subjects in DISCIPLINES.items() for subject in subjects}
_ID = re.compile(r"(?:validation|test|dev)_(.+)_(\d+)$")
_OWN_LETTER = re.compile(r"\s*[(\[]?([A-Za-z])\s*[)\].:]\s+")

Record = tuple[int, str, Any]


def shards(root: pathlib.Path, track: str) -> list[pathlib.Path]:
    folder = root / track
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.glob("*.parquet") if not p.name.startswith("._") and p.is_file()
    )


def tracks_in(root: pathlib.Path) -> list[str]:
    return [t for t in TRACKS if shards(root, t)]


def read(root: pathlib.Path, tracks: list[str], parquet_rows) -> Iterator[Record]:
    """Every question of the given tracks, track by track, shards in name order."""
    index = 0
    for track in tracks:
        for shard in shards(root, track):
            for _, _, row in parquet_rows(shard, index):
                source = f"{track}/{shard.name} row {index}"
                if isinstance(row, Unparsed):
                    yield index, source, row
                    return
                # A row over a size limit was never built: it stays that row's error.
                yield index, source, row if isinstance(row, Invalid) else question(row, track)
                index += 1


def subject_of(rid: str) -> str | None:
    m = _ID.match(rid)
    return m.group(1) if m else None


def question(row: dict, track: str) -> dict | Invalid:
    rid = row.get("id")
    if not isinstance(rid, str) or not rid.strip():
        return Invalid(None, "missing field 'id'")
    rid = rid.strip()
    qid = f"{track}/{rid}"
    subject = subject_of(rid)
    if subject is None:
        return Invalid(
            qid, f"field 'id' {rid!r} does not name a subject (expected validation_<Subject>_<n>)"
        )
    discipline = DISCIPLINE_OF.get(subject)
    if discipline is None:
        return Invalid(qid, f"field 'id' names an unknown subject {subject!r}")
    options = row.get("options")
    if options is None:
        options = []
    if not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options):
        return Invalid(qid, "field 'options' must be a list of strings")
    options = [_drop_letter(o, i) for i, o in enumerate(options)]
    answer = row.get("answer")
    out: dict = {
        "id": qid,
        "video": f"{discipline}/{rid}.mp4",
        "question": row.get("question"),
        "options": options or None,
        "answer": answer
        if not isinstance(answer, (int, float)) or isinstance(answer, bool)
        else str(answer),
        "_strict_answer": bool(options),
        "question_type": row.get("question_type"),
        "categories": {"track": track, "discipline": discipline, "subject": subject},
    }
    image = row.get("image")
    if image is not None:
        made = _image(image, rid)
        if isinstance(made, str):
            return Invalid(qid, made)
        out["_images"] = (made,)
        out["images"] = [made.describe()]
    return out


def _drop_letter(option: str, i: int) -> str:
    m = _OWN_LETTER.match(option)
    return (
        option[m.end() :].strip()
        if m and i < len(LETTERS) and m.group(1).upper() == LETTERS[i]
        else option.strip()
    )


def _image(value: object, rid: str) -> DatasetImage | str:
    """The row's image as bytes (a parquet image struct: `bytes` and `path`)."""
    if isinstance(value, dict):
        data, name = value.get("bytes"), value.get("path")
    else:
        data, name = value, None
    if not isinstance(data, (bytes, bytearray)) or not data:
        return "field 'image' holds no image bytes"
    data = bytes(data)
    return DatasetImage(str(name or f"{rid}.png"), data, hashlib.sha256(data).hexdigest())
