"""`murgat score`: the MURGAT protocol over a response file."""

from __future__ import annotations

import json
import pathlib

import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as ui
from murgat_local.cli.options import SCORE
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app


@app.command()
@takes("score")
def score(
    responses: pathlib.Path = typer.Argument(..., help="JSONL, or the reference's JSON list"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="count the calls each stage needs; run nothing"
    ),
    calibrate: int = typer.Option(
        0,
        "--calibrate",
        min=0,
        help="with --dry-run: judge the first N responses for real and estimate the hours for all",
    ),
    *,
    media_root: pathlib.Path,
    out: pathlib.Path,
    config: pathlib.Path | None,
    verbose: bool,
    given: Given,
) -> None:
    """Score RESPONSES and write OUT/scores.jsonl and OUT/summary.json."""
    from ..config import load_config
    from ..jobs.score_run import open_scorer
    from ..jobs.score_run import score as run_score
    from ..reports.table import stage_progress
    from ..stages import PROTOCOL

    _check(responses, media_root, bool(calibrate) and not dry_run)
    cfg = f.load(load_config, config, given.of(SCORE))
    ui.show_engine_logs(verbose)
    runner = ui.set_up(open_scorer, cfg, responses, media_root, out)
    with (
        ui._running(out, quiet=not (verbose or dry_run)),
        stage_progress(ui.console, list(PROTOCOL)) as progress,
    ):
        result = run_score(runner, responses, progress, dry_run, calibrate)
    if isinstance(result, dict):  # after the engines are down, so nothing of theirs follows it
        ui.console.print_json(json.dumps(result))
        raise typer.Exit(0)
    _show(result)
    raise typer.Exit(result.exit_code)


def _check(responses: pathlib.Path, media_root: pathlib.Path, calibrate_alone: bool) -> None:
    if not responses.is_file():
        ui._fail(f"responses file {responses} does not exist")
    if not media_root.is_dir():
        ui._fail(f"--media-root {media_root} is not a folder")
    if calibrate_alone:
        ui._fail("--calibrate goes with --dry-run")


def _show(result) -> None:
    """The scores, the stages, the errors, the escalation and the files written."""
    from ..reports.groups_terminal import terminal_tables
    from ..reports.table import errors_table, stages_table, summary_table

    summary = result.summary
    ui.console.print(summary_table(summary))
    for t in terminal_tables(summary):
        ui.console.print(t)
    ui.console.print(stages_table(summary))
    if result.errors:
        ui.console.print(errors_table(summary))
    for stage, c in (summary.certification or {}).items():
        decided = ", ".join(f"{n} by {who}" for who, n in (c.decided_by or {}).items())
        target, alpha = (format(v, "g") if v is not None else "-" for v in (c.target, c.alpha))
        ui.console.print(
            f"escalation {stage}: {decided}, {c.abstained} abstained "
            f"(target {target}, alpha {alpha})",
            markup=False,
        )
    ui.warn_judges(summary.warnings)
    if summary.failure:
        ui._error(summary.failure)
    ui.console.print(f"wrote {result.records_path} and {result.summary_path}", markup=False)
