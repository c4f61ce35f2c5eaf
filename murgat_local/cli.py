"""The `murgat` command line."""

from __future__ import annotations

import json
import os
import pathlib
import sys
from contextlib import contextmanager
from typing import Iterator, Optional

import typer
from rich.console import Console

from . import offline

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Score fact-level multimodal attribution (MURGAT) with local judges.")
console = Console()
err = Console(stderr=True)

USAGE_ERROR = 2


@app.callback()
def _invocation() -> None:
    # At invocation, not import: importing the package leaves the environment alone.
    offline.enforce()
    # vLLM's per-request INFO lines would bury the progress bars and the table.
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(USAGE_ERROR)


@contextmanager
def _engine_logs(out: pathlib.Path, quiet: bool) -> Iterator[None]:
    """When quiet, engines write to OUT/engine.log while our consoles keep the terminal."""
    if not quiet:
        yield
        return
    from .reports.logs import redirect_fds

    global console, err
    log = out / "engine.log"
    err.print(f"[dim]engine logs: {log} (--verbose shows them here)[/dim]")
    saved = console, err
    with redirect_fds(log) as terminal:
        console, err = Console(file=terminal.stdout), Console(file=terminal.stderr)
        try:
            yield
        finally:
            console, err = saved


@app.command()
def score(
    responses: pathlib.Path = typer.Argument(..., help="JSONL, or the reference's JSON list"),
    media_root: pathlib.Path = typer.Option(..., "--media-root", help="folder holding the videos"),
    out: pathlib.Path = typer.Option(..., "--out", help="output folder"),
    config: Optional[pathlib.Path] = typer.Option(None, "--config", help="TOML run configuration"),
    judge: Optional[str] = typer.Option(None, "--judge", help="model for every stage (preset or directory)"),
    verifier: Optional[str] = typer.Option(None, "--verifier", help="model for verifiable-claim identification"),
    decomposer: Optional[str] = typer.Option(None, "--decomposer", help="model for decontextualization and decomposition"),
    entailer: Optional[str] = typer.Option(None, "--entailer", help="model for attribution"),
    engine: Optional[str] = typer.Option(None, "--engine", help="vllm (default) or transformers"),
    compat: Optional[str] = typer.Option(None, "--compat", help="'reference' reproduces the public reference"),
    no_decontext: bool = typer.Option(False, "--no-decontextualize", help="skip decontextualization"),
    limit: Optional[int] = typer.Option(None, "--limit", help="score only the first N responses"),
    cache: Optional[pathlib.Path] = typer.Option(None, "--cache", help="verdict cache (default OUT/verdicts.sqlite)"),
    models_dir: Optional[pathlib.Path] = typer.Option(None, "--models-dir", envvar="MURGAT_MODELS_DIR",
                                                      help="where presets' relative model paths live"),
    dry_run: bool = typer.Option(False, "--dry-run", help="count the calls each stage needs; run nothing"),
    verbose: bool = typer.Option(False, "--verbose", help="show engine logs here instead of OUT/engine.log"),
    max_failed_calls: Optional[float] = typer.Option(
        None, "--max-failed-calls",
        help="fail the run (exit 1) when a larger share of judge calls got no verdict (default 0.05)"),
) -> None:
    """Score RESPONSES and write OUT/scores.jsonl and OUT/summary.json."""
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    from pydantic import ValidationError

    from .config import load_config
    from .judges import ModelNotFound
    from .pipeline.runner import Runner
    from .reports.table import errors_table, stage_progress, stages_table, summary_table

    if not responses.is_file():
        _fail(f"responses file {responses} does not exist")
    if not media_root.is_dir():
        _fail(f"--media-root {media_root} is not a folder")
    if compat not in (None, "reference"):
        _fail(f"--compat takes 'reference', not {compat!r}")
    try:
        cfg = load_config(config, {
            "judge": judge, "verifier": verifier, "decomposer": decomposer, "entailer": entailer,
            "engine": engine, "compat": compat, "limit": limit, "cache": cache,
            "models_dir": models_dir, "decontextualize": False if no_decontext else None,
            "max_failed_calls": max_failed_calls,
        })
    except (ValidationError, OSError, ValueError) as e:
        _fail(f"bad configuration: {e}")
    try:  # setting up (no model starts here): a model or preset that cannot be found is a usage error
        runner = Runner(cfg, media_root, out)
    except (ModelNotFound, ValueError) as e:
        _fail(str(e))
    with _engine_logs(out, quiet=not (verbose or dry_run)), \
            stage_progress(console, ["decontext", "verifiable", "decompose", "entail"]) as progress:
        runner.attach_progress(progress)
        try:  # running: item faults are records; anything else stops the run, never as usage
            if dry_run:
                plan = runner.plan(responses)
                console.print_json(json.dumps(plan))
                raise typer.Exit(0)
            result = runner.run(responses)
        except typer.Exit:
            raise
        except Exception as e:
            err.print(f"[red]error:[/red] the run stopped: {type(e).__name__}: {e}. Verdicts already "
                      "judged are in the cache: the same command resumes.")
            raise typer.Exit(1)
        finally:
            runner.close()
    console.print(summary_table(result.summary))
    console.print(stages_table(result.summary))
    if result.errors:
        console.print(errors_table(result.errors))
    if result.summary.get("failure"):
        err.print(f"[red]error:[/red] {result.summary['failure']}")
    console.print(f"wrote {result.records_path} and {result.summary_path}")
    raise typer.Exit(result.exit_code)


@app.command()
def segment(
    responses: pathlib.Path = typer.Argument(...),
    compat: Optional[str] = typer.Option(None, "--compat"),
) -> None:
    """Print each response's sentences and parsed citations as JSONL (no model, no media)."""
    from .inputs.responses import InputError, read_responses
    from .reports.jsonl import dumps_record
    from .text.segment import segment_response

    if compat not in (None, "reference"):
        _fail(f"--compat takes 'reference', not {compat!r}")
    if not responses.is_file():
        _fail(f"responses file {responses} does not exist")
    for item in read_responses(responses):
        if isinstance(item, InputError):
            rec = {"index": item.index, "id": item.id, "error": item.reason, "source": item.source}
        else:
            rec = {"index": item.index, "id": item.id, **segment_response(item.generation, compat)}
        sys.stdout.write(dumps_record(rec) + "\n")


@app.command()
def rescore(
    scored: pathlib.Path = typer.Argument(..., help="our scores.jsonl, or the reference's scored JSON"),
    compat: Optional[str] = typer.Option(None, "--compat"),
    out: Optional[pathlib.Path] = typer.Option(None, "--out", help="write rescored records here (JSONL)"),
) -> None:
    """Recompute scores from recorded verdicts, with no model."""
    from .inputs.responses import iter_records
    from .metrics.scores import summarize
    from .pipeline.records import rescore_record
    from .reports.jsonl import dumps_record
    from .reports.table import summary_table

    if compat not in (None, "reference"):
        _fail(f"--compat takes 'reference', not {compat!r}")
    if not scored.is_file():
        _fail(f"{scored} does not exist")
    records = []
    for _, source, obj in iter_records(scored):
        if not isinstance(obj, dict):
            _fail(f"{scored} {source}: not a scored record")
        records.append(rescore_record(obj, compat))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(dumps_record(r, sort_keys=True) + "\n")
    summary = summarize(records)
    summary["mode"] = compat or (records[0].get("mode") if records else "default")
    console.print(summary_table(summary, "MURGAT scores (rescored)"))
    console.print_json(json.dumps({k: summary[k] for k in ("coverage", "precision", "recall", "f1", "murgat_s")}))


@app.command()
def models() -> None:
    """List the model presets and whether their weights are present."""
    from rich.table import Table

    from .judges import available_presets, load_preset

    t = Table(title="Model presets")
    for col in ("preset", "modalities", "path", "present"):
        t.add_column(col)
    for name in available_presets():
        p = load_preset(name)
        present = (p.path / "config.json").is_file()
        t.add_row(name, ",".join(sorted(p.modalities)), str(p.path), "yes" if present else "no")
    console.print(t)


@app.command()
def smoke(
    model: list[str] = typer.Option(None, "--model", help="preset(s); default: every local test model"),
    engine: str = typer.Option("vllm", "--engine"),
) -> None:
    """Start each model on an engine and judge one request per modality it accepts."""
    from .judges.smoke import run_smoke
    from rich.table import Table

    rows = run_smoke(model or None, engine)
    t = Table(title=f"Engine smoke test ({engine})")
    for col in ("model", "modality", "verdict", "raw", "tokens in/out"):
        t.add_column(col)
    failed = 0
    for r in rows:
        failed += r["verdict"] is None
        t.add_row(r["model"], r["modality"], str(r["verdict"]), r["raw"][:60], f"{r['prompt_tokens']}/{r['output_tokens']}")
    console.print(t)
    raise typer.Exit(1 if failed else 0)


if __name__ == "__main__":
    app()
