"""`murgat score`: the MURGAT protocol over a response file."""

from __future__ import annotations

import json
import pathlib

import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app


@app.command()
def score(
    responses: pathlib.Path = typer.Argument(..., help="JSONL, or the reference's JSON list"),
    media_root: pathlib.Path = f.MEDIA_ROOT,
    out: pathlib.Path = f.OUT,
    config: pathlib.Path | None = f.CONFIG,
    judge: str | None = f.JUDGE,
    verifier: str | None = f.VERIFIER,
    decomposer: str | None = f.DECOMPOSER,
    entailer: str | None = f.ENTAILER,
    entailer_visual: str | None = f.ENTAILER_VISUAL,
    entailer_audio: str | None = f.ENTAILER_AUDIO,
    engine: str | None = f.ENGINE,
    base_url: str | None = f.BASE_URL,
    api_key_env: str | None = f.API_KEY_ENV,
    max_concurrency: int | None = f.MAX_CONCURRENCY,
    fingerprint: str | None = f.FINGERPRINT,
    tokenizer: pathlib.Path | None = f.TOKENIZER,
    data_parallel: int | None = f.DATA_PARALLEL,
    compat: str | None = f.COMPAT,
    no_decontext: bool = f.NO_DECONTEXT,
    allow_outside: list[pathlib.Path] = f.ALLOW_OUTSIDE,
    parse_reasoning: bool = f.PARSE_REASONING,
    limit: int | None = f.LIMIT,
    cache: pathlib.Path | None = f.CACHE,
    models_dir: pathlib.Path | None = f.MODELS_DIR,
    group_by: list[str] = f.GROUP_BY,
    escalate_to: list[str] = typer.Option(
        [],
        "--escalate-to",
        help="with a config holding certified thresholds ([escalation], from meta-eval --certify "
        "--select): a verdict under its judge's threshold goes to this judge (a model, a panel, "
        "or human:LABELS; repeat for a cascade); what none keeps is abstained",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="count the calls each stage needs; run nothing"
    ),
    calibrate: int = typer.Option(
        0,
        "--calibrate",
        min=0,
        help="with --dry-run: judge the first N responses for real and estimate the hours for all",
    ),
    verbose: bool = f.VERBOSE,
    max_failed_calls: float | None = typer.Option(
        None,
        "--max-failed-calls",
        help="fail the run (exit 1) when a larger share of judge calls got no verdict (default 0.05)",
    ),
) -> None:
    """Score RESPONSES and write OUT/scores.jsonl and OUT/summary.json."""
    from ..config import load_config
    from ..jobs.score_run import open_scorer
    from ..jobs.score_run import score as run_score
    from ..reports.table import stage_progress
    from ..stages import PROTOCOL

    _check(responses, media_root, bool(calibrate) and not dry_run)
    given: dict = {
        "judge": judge,
        "verifier": verifier,
        "decomposer": decomposer,
        "entailer": entailer,
    }
    given |= {"entailer_visual": entailer_visual, "entailer_audio": entailer_audio}
    given |= f.engine_overrides(
        engine, base_url, api_key_env, max_concurrency, fingerprint, data_parallel, tokenizer
    )
    given |= f.judged_overrides(compat, no_decontext, parse_reasoning, limit)
    given |= {"cache": cache, "models_dir": models_dir, "allow_outside": allow_outside or None}
    given |= {"max_failed_calls": max_failed_calls, "group_by": group_by or None}
    given["escalate_to"] = escalate_to or None
    cfg = f.load(load_config, config, given)
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

    ui.console.print(summary_table(result.summary))
    for t in terminal_tables(result.summary):
        ui.console.print(t)
    ui.console.print(stages_table(result.summary))
    if result.errors:
        ui.console.print(errors_table(result.errors))
    for stage, c in (result.summary.get("certification") or {}).items():
        decided = ", ".join(f"{n} by {who}" for who, n in c["decided_by"].items())
        ui.console.print(
            f"escalation {stage}: {decided}, {c['abstained']} abstained "
            f"(target {c['target']:g}, alpha {c['alpha']:g})",
            markup=False,
        )
    ui.warn_judges(result.summary.get("warnings"))
    if result.summary.get("failure"):
        ui._error(f"{result.summary['failure']}")
    ui.console.print(f"wrote {result.records_path} and {result.summary_path}", markup=False)
