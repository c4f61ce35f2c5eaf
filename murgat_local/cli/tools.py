"""`murgat segment / rescore / models / smoke`: tools that need no judge run."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import List, Optional

import typer

import murgat_local.cli as ui
from murgat_local.cli import app
from murgat_local.cli import score as score_cli


@app.command()
def segment(
    responses: pathlib.Path = typer.Argument(...),
    compat: Optional[str] = typer.Option(None, "--compat"),
) -> None:
    """Print each response's sentences and parsed citations as JSONL (no model, no media)."""
    from ..inputs.responses import InputError, read_responses
    from ..jsonl import dumps_record
    from ..text.segment import segment_response

    if compat not in (None, "reference"):
        ui._fail(f"--compat takes 'reference', not {compat!r}")
    if not responses.is_file():
        ui._fail(f"responses file {responses} does not exist")
    for item in read_responses(responses):
        if isinstance(item, InputError):
            rec = {"index": item.index, "id": item.id, "error": item.reason, "source": item.source}
        else:
            rec = {"index": item.index, "id": item.id, "source": item.source, **segment_response(item.generation, compat)}
        sys.stdout.write(dumps_record(rec) + "\n")


@app.command()
def rescore(
    scored: pathlib.Path = typer.Argument(..., help="our scores.jsonl, or the reference's scored JSON"),
    compat: Optional[str] = typer.Option(None, "--compat"),
    out: Optional[pathlib.Path] = typer.Option(None, "--out", help="write rescored records here (JSONL)"),
    resamples: int = typer.Option(10_000, "--resamples", min=0, help="bootstrap resamples of the 95% intervals (0: none)"),
    group_by: List[str] = score_cli.GROUP_BY,
) -> None:
    """Recompute scores from recorded verdicts, with no model."""
    from ..inputs.responses import iter_records
    from ..metrics.intervals import IntervalValues, add_intervals
    from ..metrics.scores import summarize
    from ..pipeline.records import rescore_record
    from ..jsonl import dumps_record
    from ..reports.groups_terminal import terminal_tables
    from ..reports.table import summary_table

    if compat not in (None, "reference"):
        ui._fail(f"--compat takes 'reference', not {compat!r}")
    if not scored.is_file():
        ui._fail(f"{scored} does not exist")
    records = []
    for _, source, obj in iter_records(scored):
        if not isinstance(obj, dict):
            ui._fail(f"{scored} {source}: not a scored record")
        records.append(rescore_record(obj, compat))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(dumps_record(r, sort_keys=True) + "\n")
    summary = summarize(records, group_by)
    add_intervals(summary, IntervalValues.of(records, group_by), n_resamples=resamples)
    summary["mode"] = compat or (records[0].get("mode") if records else "default")
    ui.console.print(summary_table(summary, "MURGAT scores (rescored)"))
    for t in terminal_tables(summary):
        ui.console.print(t)
    keys = [k for m in ("coverage", "precision", "recall", "f1", "murgat_s") for k in (m, f"{m}_ci") if k in summary]
    keys += ["by_group"] if "by_group" in summary else []
    ui.console.print_json(json.dumps({k: summary[k] for k in keys}))


@app.command()
def models() -> None:
    """List the model presets and whether their weights are present."""
    from rich.table import Table

    from ..engines import available_presets, engine_names, load_preset

    t = Table(title="Model presets")
    for col in ("preset", "modalities", "path", "present"):
        t.add_column(col)
    for name in available_presets():
        p = load_preset(name)
        present = (p.path / "config.json").is_file()
        t.add_row(name, ",".join(sorted(p.modalities)), str(p.path), "yes" if present else "no")
    ui.console.print(t)
    ui.console.print(f"engines (--engine): {', '.join(engine_names())}", markup=False)


@app.command()
def smoke(
    model: list[str] = typer.Option(None, "--model", help="preset(s); default: every local test model"),
    engine: str = typer.Option("vllm", "--engine"),
) -> None:
    """Start each model on an engine and judge one request per modality it accepts."""
    from ..judges.smoke import run_smoke
    from rich.table import Table

    rows = run_smoke(model or None, engine)
    t = Table(title=f"Engine smoke test ({engine})")
    for col in ("model", "modality", "verdict", "raw", "tokens in/out"):
        t.add_column(col)
    failed = 0
    for r in rows:
        failed += r["verdict"] is None
        t.add_row(r["model"], r["modality"], str(r["verdict"]), r["raw"][:60], f"{r['prompt_tokens']}/{r['output_tokens']}")
    ui.console.print(t)
    raise typer.Exit(1 if failed else 0)
