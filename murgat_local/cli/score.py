"""`murgat score`: the MURGAT protocol over a response file."""

from __future__ import annotations

import json
import os
import pathlib

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app

# The options that change what is judged, under the same names as the config's keys; `murgat
# segment` takes them too (cli/tools.py), so it prints what this command judges.
CONFIG = typer.Option(None, "--config", help="TOML run configuration")
COMPAT = typer.Option(None, "--compat", help="'reference' reproduces the public reference")
NO_DECONTEXT = typer.Option(False, "--no-decontextualize", help="skip decontextualization")
PARSE_REASONING = typer.Option(
    False, "--parse-reasoning", help="with --compat reference: the reference's --parse_reasoning"
)
LIMIT = typer.Option(None, "--limit", help="only the first N responses")


def judged_overrides(
    compat: str | None, no_decontext: bool, parse_reasoning: bool, limit: int | None
) -> dict:
    """Those options as `load_config` overrides (None: the file's value, or the default)."""
    if compat not in (None, "reference"):
        ui._fail(f"--compat takes 'reference', not {compat!r}")
    return {
        "compat": compat,
        "decontextualize": False if no_decontext else None,
        "parse_reasoning": parse_reasoning or None,
        "limit": limit,
    }


# `murgat score`, `run`, `rescore`, `compare` and `report`: summary.json's `by_group`.
GROUP_BY = typer.Option(
    [],
    "--group-by",
    help="also summarize per value of this field: a key of the responses' "
    "`categories`, or model, benchmark, question_type (repeatable)",
)


@app.command()
def score(
    responses: pathlib.Path = typer.Argument(..., help="JSONL, or the reference's JSON list"),
    media_root: pathlib.Path = typer.Option(..., "--media-root", help="folder holding the videos"),
    out: pathlib.Path = typer.Option(..., "--out", help="output folder"),
    config: pathlib.Path | None = CONFIG,
    judge: str | None = typer.Option(
        None, "--judge", help="model for every stage (preset or directory)"
    ),
    verifier: str | None = typer.Option(
        None, "--verifier", help="model for verifiable-claim identification"
    ),
    decomposer: str | None = typer.Option(
        None, "--decomposer", help="model for decontextualization and decomposition"
    ),
    entailer: str | None = typer.Option(None, "--entailer", help="model for attribution"),
    entailer_visual: str | None = ui.ENTAILER_VISUAL,
    entailer_audio: str | None = ui.ENTAILER_AUDIO,
    engine: str | None = typer.Option(None, "--engine", help=ui.ENGINE_HELP),
    base_url: str | None = ui.BASE_URL,
    api_key_env: str | None = ui.API_KEY_ENV,
    max_concurrency: int | None = ui.MAX_CONCURRENCY,
    fingerprint: str | None = ui.FINGERPRINT,
    tokenizer: pathlib.Path | None = ui.TOKENIZER,
    data_parallel: int | None = ui.DATA_PARALLEL,
    compat: str | None = COMPAT,
    no_decontext: bool = NO_DECONTEXT,
    allow_outside: list[pathlib.Path] = typer.Option(
        [],
        "--allow-outside",
        help="a folder outside --media-root that videos may be in (repeatable)",
    ),
    parse_reasoning: bool = PARSE_REASONING,
    limit: int | None = LIMIT,
    cache: pathlib.Path | None = typer.Option(
        None, "--cache", help="verdict cache (default OUT/verdicts.sqlite)"
    ),
    models_dir: pathlib.Path | None = typer.Option(
        None,
        "--models-dir",
        envvar="MURGAT_MODELS_DIR",
        help="where presets' relative model paths live",
    ),
    group_by: list[str] = GROUP_BY,
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
    verbose: bool = typer.Option(
        False, "--verbose", help="show engine logs here instead of OUT/engine.log"
    ),
    max_failed_calls: float | None = typer.Option(
        None,
        "--max-failed-calls",
        help="fail the run (exit 1) when a larger share of judge calls got no verdict (default 0.05)",
    ),
) -> None:
    """Score RESPONSES and write OUT/scores.jsonl and OUT/summary.json."""
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    from pydantic import ValidationError

    from ..config import load_config
    from ..engines import ModelNotFound
    from ..metrics.run_summary import RunSummary
    from ..pipeline.runner import Runner
    from ..reports.table import errors_table, stage_progress, stages_table, summary_table
    from ..stages import PROTOCOL

    if not responses.is_file():
        ui._fail(f"responses file {responses} does not exist")
    if not media_root.is_dir():
        ui._fail(f"--media-root {media_root} is not a folder")
    if calibrate and not dry_run:
        ui._fail("--calibrate goes with --dry-run")
    try:
        cfg = load_config(
            config,
            {
                "judge": judge,
                "verifier": verifier,
                "decomposer": decomposer,
                "entailer": entailer,
                "entailer_visual": entailer_visual,
                "entailer_audio": entailer_audio,
                **ui.engine_overrides(
                    engine,
                    base_url,
                    api_key_env,
                    max_concurrency,
                    fingerprint,
                    data_parallel,
                    tokenizer,
                ),
                **judged_overrides(compat, no_decontext, parse_reasoning, limit),
                "cache": cache,
                "models_dir": models_dir,
                "allow_outside": allow_outside or None,
                "max_failed_calls": max_failed_calls,
                "group_by": group_by or None,
                "escalate_to": escalate_to or None,
            },
        )
    except (ValidationError, OSError, ValueError) as e:
        ui._fail(f"bad configuration: {e}")
    try:  # setting up (no model starts here): a model or preset that cannot be found is a usage error
        runner = Runner(cfg, media_root, out, summary=RunSummary)
    except (ModelNotFound, ValueError) as e:
        ui._fail(str(e))
    try:  # so is a judge that cannot take what the input cites (as far as its first chunk tells)
        runner.check_input(responses)
    except ValueError as e:
        runner.close()
        ui._fail(str(e))
    with (
        ui._running(out, quiet=not (verbose or dry_run)),
        stage_progress(ui.console, list(PROTOCOL)) as progress,
    ):
        runner.attach_progress(progress)
        try:  # running: item faults are records; anything else stops the run, never as usage
            if dry_run:
                plan = runner.plan(responses)
                if calibrate:
                    plan["estimate"] = runner.estimate(responses, plan, calibrate)
            else:
                result = runner.run(responses)
        finally:
            runner.close()
    if dry_run:  # after the engines are down, so nothing of theirs follows the plan
        ui.console.print_json(json.dumps(plan))
        raise typer.Exit(0)
    from ..reports.groups_terminal import terminal_tables

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
    raise typer.Exit(result.exit_code)
