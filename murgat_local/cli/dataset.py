"""`murgat dataset`: every question as the responders will see it, with no model."""

from __future__ import annotations

import json
import pathlib
import sys

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app


@app.command()
def dataset(
    path: pathlib.Path = typer.Argument(
        ..., help="a benchmark folder or file (WorldSense, Video-MMMU, a question file)"
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        help="worldsense, worldsense-table, videommmu, saved, jsonl, json, parquet, arrow",
    ),
    limit: int | None = typer.Option(None, "--limit", min=0),
) -> None:
    """Print one JSON object per question: id, video, question, options, answer, question_type,
    images, categories, and the error of a row that cannot be used. Exit 1 when any row erred."""
    from ..inputs.benchmarks import DatasetFormatError, open_dataset
    from ..inputs.responses import InputError

    try:
        ds = open_dataset(path, fmt)
    except DatasetFormatError as e:
        cli._fail(str(e))
    bad = 0
    for item in ds.items(limit):
        if isinstance(item, InputError):
            bad += 1
            row = {"id": item.id, "source": item.source, "error": item.reason}
        else:
            row = question_row(item, ds.media_root)
            bad += "error" in row
        # Machine output, one line per question: written as is, never wrapped by a console.
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    raise typer.Exit(1 if bad else 0)


def question_row(item, media_root: pathlib.Path | None) -> dict:
    video = (media_root / item.video) if media_root is not None else pathlib.Path(item.video)
    row = {
        "id": item.id,
        "video": str(video),
        "question": item.question,
        "options": list(item.options or []),
        "answer": item.answer,
        "question_type": item.question_type,
        "images": [im.describe() for im in item.images],
        "categories": item.categories,
    }
    if media_root is not None and not video.is_file():
        row["error"] = f"video {item.video} is not in {media_root}"
    return row
