"""`murgat report`: one self-contained HTML file from score and run folders (no model)."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app
from murgat_local.results import MetaEval


@app.command()
def report(
    folders: list[pathlib.Path] = typer.Argument(
        ..., help="`murgat score` or `murgat run` output folders"
    ),
    out: pathlib.Path = typer.Option(..., "--out", help="the HTML file to write"),
    media_root: pathlib.Path | None = typer.Option(
        None,
        "--media-root",
        help="folder holding the videos: adds a player that seeks to a clicked citation",
    ),
    max_responses: int = typer.Option(
        300,
        "--max-responses",
        min=0,
        help="responses in the drill-down, split evenly over model x strategy",
    ),
    relative_media: bool = typer.Option(
        False,
        "--relative-media",
        help="link videos by a path relative to the report, not a file:// URL",
    ),
    group_by: list[str] = typer.Option(
        [],
        "--group-by",
        help="add a table per value of this field (a `categories` "
        "key, model, benchmark, question_type; repeatable)",
    ),
    meta_eval: pathlib.Path | None = typer.Option(
        None,
        "--meta-eval",
        help="a `murgat meta-eval` output folder (or its meta_eval.json): adds the judges' "
        "reliability diagrams",
    ),
) -> None:
    """Write OUT: summary table, plots and a per-response drill-down, with no network reference."""
    from ..reports.html import build
    from ..reports.rundata import ReportInputError

    for f in folders:
        if not f.is_dir():
            ui._fail(f"{f} is not a folder")
    if media_root is not None and not media_root.is_dir():
        ui._fail(f"--media-root {media_root} is not a folder")
    if out.is_dir():
        ui._fail(f"--out {out} is a folder; give the HTML file's name")
    meta = _meta_eval(meta_eval) if meta_eval is not None else None
    try:
        result = build(
            list(folders),
            out,
            media_root=media_root,
            max_responses=max_responses,
            relative_media=relative_media,
            group_by=tuple(dict.fromkeys(group_by)),
            meta_eval=meta,
        )
    except ReportInputError as e:
        ui._fail(str(e))
    ui.console.print(
        f"wrote {result.path}: {result.cells} model x strategy, {result.responses} responses, "
        f"{result.shown} in the drill-down",
        markup=False,
    )
    if result.notes:
        ui.console.print(
            f"{result.notes} notes on the inputs (unreadable lines, values that cannot be "
            "drawn): see 'Notes on the inputs' in the page",
            markup=False,
        )


def _meta_eval(given: pathlib.Path) -> MetaEval:
    """meta_eval.json, from its file or the `murgat meta-eval` folder holding it, read as its
    schema (`murgat schema meta-eval`) says."""
    from ..results import ReadError, layout, read_meta_eval

    path = given / layout.META_EVAL if given.is_dir() else given
    meta = read_meta_eval(path)
    if isinstance(meta, ReadError):
        ui._fail(f"--meta-eval {given}: {meta}")
    return meta
