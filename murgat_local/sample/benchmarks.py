"""Benchmark folders in their released layouts, built offline from a sample video.

For tests and the reading benchmark: WorldSense (`worldsense_qa.json` + `videos/`), its flattened
table (TSV and parquet), and Video-MMMU (three configs of parquet shards, discipline folders, an
Adaptation image, and the quirks of the release: "None" question types, open answers, archive
litter). Every layout can carry rows that must fail, each naming its field.
"""

from __future__ import annotations

import io
import json
import pathlib
import shutil

import numpy as np

WS_DOMAINS = ("Sports", "Music", "Daily Life")
WS_TASKS = ("Counting", "Audio Recognition", "Temporal Localization")


def _link(video: pathlib.Path, target: pathlib.Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        try:
            target.hardlink_to(video)
        except OSError:
            shutil.copyfile(video, target)


def worldsense_official(
    out: pathlib.Path, video: pathlib.Path, videos: int = 3, tasks: int = 2, bad: bool = True
) -> pathlib.Path:
    """`out/worldsense_qa.json` and `out/videos/<id>.mp4`; with `bad`, three more questions that
    must fail: a malformed candidate list, an answer naming no option, a missing video."""
    data: dict = {}
    for v in range(videos):
        vid = f"ws{v:05d}"
        entry: dict = {
            "video_id": vid,
            "video_duration": "8s",
            "duration": ("<1min", "1-2min")[v % 2],
            "domain": WS_DOMAINS[v % len(WS_DOMAINS)],
            "sub_category": f"sub{v % 2}",
            "audio_class": ["speech", "music"][: 1 + v % 2],
            "video_caption": "colours and tones",
        }
        for t in range(tasks):
            entry[f"task{t}"] = {
                "task_domain": ("Recognition", "Reasoning")[t % 2],
                "task_type": WS_TASKS[(v + t) % len(WS_TASKS)],
                "question": f"Which colour comes first in video {v}, question {t}?",
                "answer": "ABCD"[(v + t) % 4],
                "candidates": ["A. red", "B. green", "C. blue", "D. yellow"],
            }
        data[vid] = entry
        if video is not None:
            _link(video, out / "videos" / f"{vid}.mp4")
    if bad:
        base = {
            "video_duration": "8s",
            "duration": "<1min",
            "domain": "Sports",
            "sub_category": "sub0",
            "audio_class": ["speech"],
            "video_caption": "",
        }
        data["wsbad01"] = {
            **base,
            "video_id": "wsbad01",
            "task0": {
                "task_domain": "Recognition",
                "task_type": "Counting",
                "question": "How many?",
                "answer": "A",
                "candidates": ["one", "two"],
            },
        }
        data["wsbad02"] = {
            **base,
            "video_id": "wsbad02",
            "task0": {
                "task_domain": "Recognition",
                "task_type": "Counting",
                "question": "How many?",
                "answer": "E",
                "candidates": ["A. one", "B. two"],
            },
        }
        data["wsnovideo"] = {
            **base,
            "video_id": "wsnovideo",
            "task0": {
                "task_domain": "Recognition",
                "task_type": "Counting",
                "question": "How many?",
                "answer": "B",
                "candidates": ["A. one", "B. two"],
            },
        }
        if video is not None:
            _link(video, out / "videos" / "wsbad01.mp4")
            _link(video, out / "videos" / "wsbad02.mp4")
    out.mkdir(parents=True, exist_ok=True)
    (out / "worldsense_qa.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return out


def worldsense_table(
    out: pathlib.Path, video: pathlib.Path, rows: int = 4, kind: str = "tsv"
) -> pathlib.Path:
    """The flattened table (lists written as Python literals, as the harnesses print them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = []
    for i in range(rows):
        vid = f"wt{i:04d}"
        table.append(
            {
                "index": i,
                "video": vid,
                "video_path": f"./videos/{vid}.mp4",
                "candidates": str(["A. red", "B. green", "C. blue", "D. yellow"]),
                "question": f"Which colour is shown first? ({i})",
                "answer": "ABCD"[i % 4],
                "task_domain": "Recognition",
                "task_type": WS_TASKS[i % 3],
                "domain": WS_DOMAINS[i % 3],
                "duration": "<1min",
                "audio_class": str(["speech"]),
            }
        )
        if video is not None:
            _link(video, out / "videos" / f"{vid}.mp4")
    out.mkdir(parents=True, exist_ok=True)
    if kind == "tsv":
        cols = list(table[0])
        lines = ["\t".join(cols)] + ["\t".join(str(r[c]) for c in cols) for r in table]
        (out / "worldsense.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(table), out / "worldsense.parquet")
    return out


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    img = np.zeros((32, 48, 3), dtype=np.uint8)
    img[:, :24] = (220, 30, 30)
    img[:, 24:] = (30, 60, 220)
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


VMMMU_SUBJECTS = (
    "Physics",
    "Art_Theory",
    "Clinical_Medicine",
    "Architecture_and_Engineering",
    "Manage",
    "History",
)


def videommmu(
    out: pathlib.Path, video: pathlib.Path, per_track: int = 3, bad: bool = True, shards: int = 1
) -> pathlib.Path:
    """Perception/Comprehension/Adaptation parquet shards, videos in discipline folders."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..inputs.benchmarks.videommmu import DISCIPLINE_OF, TRACKS

    image = _png()
    for track in TRACKS:
        rows = []
        for n in range(per_track):
            subject = VMMMU_SUBJECTS[n % len(VMMMU_SUBJECTS)]
            rid = f"validation_{subject}_{n + 1}"
            row: dict = {
                "id": rid,
                "question": f"What colour comes first? ({track} {n})",
                "options": ["(A) red", "(B) green", "(C) blue"],
                "answer": "A",
                "question_type": "multiple-choice" if n % 2 == 0 else "None",
                "image": None,
            }
            if (
                track == "Comprehension" and n == per_track - 1
            ):  # an open question with a number answer
                row.update(
                    question="How many colours are shown?",
                    options=[],
                    answer="8",
                    question_type="open",
                )
            if track == "Adaptation":
                row.update(
                    question="Which colour in <image 1> comes first in the video?",
                    image={"bytes": image, "path": f"{rid}.png"},
                )
            rows.append(row)
            if video is not None:
                _link(video, out / DISCIPLINE_OF[subject] / f"{rid}.mp4")
        if bad and track == "Perception":
            rows.append(
                {
                    "id": "validation_Astrology_1",
                    "question": "?",
                    "options": ["(A) x", "(B) y"],
                    "answer": "A",
                    "question_type": "multiple-choice",
                    "image": None,
                }
            )
            rows.append(
                {
                    "id": "validation_Physics_99",
                    "question": "?",
                    "options": ["(A) x", "(B) y"],
                    "answer": "Q",
                    "question_type": "multiple-choice",
                    "image": None,
                }
            )
        folder = out / track
        folder.mkdir(parents=True, exist_ok=True)
        schema = pa.schema(
            [
                ("id", pa.string()),
                ("question", pa.string()),
                ("options", pa.list_(pa.string())),
                ("answer", pa.string()),
                ("question_type", pa.string()),
                ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            ]
        )
        per = -(-len(rows) // shards)
        for s in range(shards):
            part = rows[s * per : (s + 1) * per]
            pq.write_table(
                pa.Table.from_pylist(part, schema=schema),
                folder / f"test-{s:05d}-of-{shards:05d}.parquet",
            )
    # archive litter that must be ignored
    (out / "__MACOSX" / "Perception").mkdir(parents=True, exist_ok=True)
    (out / "__MACOSX" / "Perception" / "._test-00000-of-00001.parquet").write_bytes(
        b"\x00\x05\x16\x07"
    )
    (out / "Perception" / "._test-00000-of-00001.parquet").write_bytes(b"\x00\x05\x16\x07")
    return out
