"""WorldSense as released: `worldsense_qa.json`, and the flattened table other harnesses write.

The official file is one JSON object keyed by video id. Each video holds its own fields
(`video_duration`, `duration` bucket, `domain`, `sub_category`, `audio_class` list, caption) and
its questions under `task0`, `task1`, ... (`task_domain`, `task_type`, `question`, `answer` letter,
`candidates` as lettered strings "A. ..."). Videos sit at `videos/<video_id>.mp4`. A question's id
is `<video_id>/<task key>`.

The flattened table (TSV or parquet: `index`, `video`, `video_path`, `candidates`, `question`,
`answer`, the category columns) keeps lists as text in TSV; they are read as JSON, or as the
Python literal the harnesses print, never evaluated as code.
"""

from __future__ import annotations

import ast
import csv
import pathlib
import re
import sys
from collections.abc import Iterator
from typing import Any

from ..datasets import LETTERS, Invalid
from ..jsontext import Unparsed, entries, parse

QA_FILE = "worldsense_qa.json"
VIDEO_FIELDS = ("domain", "sub_category", "duration", "audio_class")
TASK_FIELDS = ("task_domain", "task_type")
CATEGORIES = ("domain", "sub_category", "task_domain", "task_type", "duration", "audio_class")
_TASK_KEY = re.compile(r"task(\d{1,9})$")  # more digits than that name no question
_LETTERED = re.compile(r"\s*\(?([A-Za-z])\s*[).:]\s*(.*)", re.DOTALL)

Record = tuple[int, str, Any]


def read_official(path: pathlib.Path) -> Iterator[Record]:
    """Every question of `worldsense_qa.json`, videos in file order, tasks in number order.

    Read video by video: a video whose JSON cannot be built (nested too deep, a number too
    long) is that video's error and the others are read; a file that does not parse as a
    whole is one error."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        yield 0, str(path), Unparsed(f"{path.name} is not readable JSON ({type(e).__name__}: {e})")
        return
    if not text.lstrip().startswith("{"):
        data = parse(text)
        what = data.reason if isinstance(data, Unparsed) else f"not a {type(data).__name__}"
        yield 0, str(path), Unparsed(f"{path.name} should be an object keyed by video id ({what})")
        return
    videos = list(entries(text))
    del text
    if videos and videos[-1][0] is None:
        why = videos[-1][2]
        if isinstance(why, Unparsed):  # where the object stopped parsing
            yield 0, str(path), Unparsed(f"{path.name} is not readable JSON ({why.reason})")
            return
    index = 0
    for video_id, _, video in videos:
        if isinstance(video, Unparsed):
            yield (
                index,
                f"video {video_id}",
                Invalid(str(video_id), f"video {video_id!r}: {video.reason}"),
            )
            index += 1
            continue
        if not isinstance(video, dict):
            yield (
                index,
                f"video {video_id}",
                Invalid(str(video_id), f"video {video_id!r} is not an object"),
            )
            index += 1
            continue
        tasks = sorted((int(m.group(1)), k) for k in video if (m := _TASK_KEY.match(str(k))))
        if not tasks:
            yield (
                index,
                f"video {video_id}",
                Invalid(str(video_id), f"video {video_id!r} has no task0, task1, ... questions"),
            )
            index += 1
            continue
        vid = str(video.get("video_id") or video_id)
        for _, key in tasks:
            qid = f"{vid}/{key}"
            yield index, f"{vid} {key}", _official_question(qid, vid, video, video[key])
            index += 1


def _official_question(qid: str, vid: str, video: dict, task: object) -> dict | Invalid:
    if not isinstance(task, dict):
        return Invalid(qid, f"{qid.split('/')[1]} is not an object")
    options = parse_candidates(task.get("candidates"))
    if isinstance(options, str):
        return Invalid(qid, options)
    categories = {f: video.get(f) for f in VIDEO_FIELDS} | {f: task.get(f) for f in TASK_FIELDS}
    return {
        "id": qid,
        "video": f"videos/{vid}.mp4",
        "question": task.get("question"),
        "options": options,
        "answer": task.get("answer"),
        "_strict_answer": True,
        "question_type": "multiple-choice",
        "categories": {k: v for k, v in categories.items() if v not in (None, "", [])},
        "video_duration": video.get("video_duration"),
    }


def parse_candidates(value: object) -> list[str] | str:
    """Lettered candidates ("A. text", "(B) text") as their texts in letter order, or why not.

    A list given as text (TSV) is read as JSON, else as a Python literal."""
    if isinstance(value, str):
        value = parse_list_text(value)
        if value is None:
            return "field 'candidates' is not a list"
    if not isinstance(value, (list, tuple)) or not value:
        return "field 'candidates' must be a non-empty list of lettered options"
    texts = []
    for i, cand in enumerate(value):
        if not isinstance(cand, str):
            return f"field 'candidates': option {i + 1} is not a string"
        m = _LETTERED.match(cand)
        if not m or m.group(1).upper() != LETTERS[i]:
            return f"field 'candidates': option {i + 1} should start with '{LETTERS[i]}.', got {cand[:40]!r}"
        texts.append(m.group(2).strip())
    return texts


def parse_list_text(text: str) -> list | None:
    text = text.strip()
    if not text.startswith("["):
        return None
    value = parse(text)
    if isinstance(value, Unparsed):
        try:  # the repr of a Python list; literal_eval builds values, it runs nothing
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, list) else None


# ---------------------------------------------------------------- the flattened table


def read_table(path: pathlib.Path, rows: Iterator[Record]) -> Iterator[Record]:
    """The flattened table's rows (from TSV or parquet) as questions."""
    for index, source, row in rows:
        if isinstance(row, Unparsed) or not isinstance(row, dict):
            yield index, source, row
            continue
        yield index, source, _table_question(row, index)


def _table_question(row: dict, index: int) -> dict | Invalid:
    rid = row.get("index")
    qid = str(rid).strip() if rid not in (None, "") else None
    video = row.get("video")
    if not isinstance(video, str) or not video.strip():
        return Invalid(qid, "missing field 'video'")
    qid = qid if qid is not None else f"{video}#{index}"
    options = parse_candidates(row.get("candidates"))
    if isinstance(options, str):
        return Invalid(qid, options)
    path = row.get("video_path")
    categories = {}
    for f in CATEGORIES:
        v = row.get(f)
        if isinstance(v, str) and v.strip().startswith("["):
            v = parse_list_text(v)
        if v not in (None, "", []):
            categories[f] = v
    return {
        "id": qid,
        "video": path.strip().lstrip("./")
        if isinstance(path, str) and path.strip()
        else f"videos/{video.strip()}.mp4",
        "question": row.get("question"),
        "options": options,
        "answer": row.get("answer"),
        "_strict_answer": True,
        "question_type": "multiple-choice",
        "categories": categories,
    }


def tsv_rows(path: pathlib.Path) -> Iterator[Record]:
    """A tab-separated file with a header line, one row per line."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            for i, row in enumerate(csv.DictReader(f, delimiter="\t")):
                yield i, f"row {i}", dict(row)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        yield (
            0,
            str(path),
            Unparsed(f"{path.name} is not a readable TSV file ({type(e).__name__}: {e})"),
        )


def looks_official(path: pathlib.Path) -> bool:
    """A JSON object whose values hold `task0`-style keys (checked on the first video)."""
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16).lstrip(b"\xef\xbb\xbf").lstrip()
    except OSError:
        return False
    return head.startswith(b"{") and re.search(rb'"task\d+"\s*:', head) is not None


TABLE_COLUMNS = {"candidates", "question", "answer", "video"}
