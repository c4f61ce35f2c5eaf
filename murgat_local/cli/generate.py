"""`murgat generate` and `murgat run`: responders on the dataset, then (for `run`) the scorer."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as cli
from murgat_local.cli.options import GENERATE, SCORE
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app


def _open(dataset: pathlib.Path, media_root: pathlib.Path | None, fmt: str | None):
    """The dataset and the folder its videos are under: --media-root, else the benchmark's own."""
    from ..inputs.benchmarks import DatasetFormatError, open_dataset

    try:
        ds = open_dataset(dataset, fmt)
    except DatasetFormatError as e:
        cli._fail(str(e))
    root = media_root or ds.media_root
    if root is None:
        cli._fail(
            f"--media-root is needed: {dataset} is a plain question file ({ds.format}), "
            "its videos could be anywhere"
        )
    if not root.is_dir():
        cli._fail(f"--media-root {root} is not a folder")
    return ds, root


DATASET = typer.Argument(
    ...,
    help="a benchmark folder (WorldSense, Video-MMMU), JSONL, JSON list, parquet, or a "
    "save_to_disk folder",
)


@app.command()
@takes("generate")
def generate(
    dataset: pathlib.Path = DATASET,
    from_file: pathlib.Path | None = typer.Option(
        None, "--from", help="posthoc: edit the answers in this file"
    ),
    out_format: str | None = typer.Option(
        None, "--format", help="'reference' also writes the reference's JSON list"
    ),
    *,
    media_root: pathlib.Path | None,
    out: pathlib.Path,
    config: pathlib.Path | None,
    verbose: bool,
    given: Given,
) -> None:
    """Answer DATASET with each model under each strategy; write what `murgat score` reads."""
    from ..config import load_generate_config
    from ..metrics.run_summary import GenerationGrades
    from ..pipeline.generating import GenerateRunner
    from ..reports.table import generation_table

    ds, media_root = _open(dataset, media_root, given.value("--dataset-format"))
    if out_format not in (None, "reference"):
        cli._fail(f"--format takes 'reference', not {out_format!r}")
    cfg = f.load(load_generate_config, config, given.of(GENERATE))
    runner = cli.set_up(
        GenerateRunner, cfg, media_root, out, from_file=from_file, grades=GenerationGrades()
    )
    cli.show_engine_logs(verbose)
    with cli._running(out, quiet=not verbose):
        try:
            result = runner.run(ds, reference_format=out_format == "reference")
        finally:
            runner.close()
    summary = result.summary
    cli.console.print(generation_table(summary))
    if summary.failure:
        cli._error(summary.failure)
    for label, path in result.outputs.items():
        cli.console.print(f"wrote {path} ({label})", markup=False)
    cli.console.print(f"summary: {result.summary_path}", markup=False)
    raise typer.Exit(result.exit_code)


@app.command()
@takes("run")
def run(
    dataset: pathlib.Path = DATASET,
    *,
    media_root: pathlib.Path | None,
    out: pathlib.Path,
    config: pathlib.Path | None,
    verbose: bool,
    given: Given,
) -> None:
    """Generate, then score every cell, in one output folder with shared engines and cache; write
    the paper's table (OUT/tables.md, OUT/tables.csv)."""
    from ..config import load_config, load_generate_config
    from ..jobs.grid import Grid
    from ..reports.table import grid_table

    ds, media_root = _open(dataset, media_root, given.value("--dataset-format"))
    # one cache for every cell, in the output folder
    cache = {"cache": out / "cache.sqlite"}
    gcfg = f.load(load_generate_config, config, given.of(GENERATE) | cache)
    # the table has a row per benchmark when the records name several
    by = list(dict.fromkeys([*(given.value("--group-by") or []), "benchmark"]))
    scfg = f.load(load_config, config, given.of(SCORE) | cache | {"group_by": by})
    grid = cli.set_up(Grid, gcfg, scfg, media_root, out)
    cli.show_engine_logs(verbose)
    with cli._running(out, quiet=not verbose):
        result = grid.run(ds)
    summary = result.summary
    cli.console.print(grid_table(summary))
    cli.warn_judges(summary.warnings)
    tables = " and ".join(str(p) for p in result.tables)
    cli.console.print(f"wrote {result.summary_path}, {tables}", markup=False)
    raise typer.Exit(result.exit_code)
