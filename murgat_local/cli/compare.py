"""`murgat compare RUN_A RUN_B`: the paired difference of two runs' scores (no model)."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app

if TYPE_CHECKING:
    from ..results import Comparison
    from ..results.comparison import PairedDifference


def _records_file(run: pathlib.Path) -> pathlib.Path:
    from ..results import layout

    path = layout.scores_file(run)
    if not path.is_file():
        ui._fail(f"{run}: not a scores.jsonl nor a `murgat score` output folder holding one")
    return path


def _read(path: pathlib.Path, group_by=(), bad: list | None = None):
    """The run's records; each line that cannot be read is printed and added to `bad`."""
    from ..metrics.compare import RunRecords
    from ..results import ReadError, read_score_records

    run = RunRecords(tuple(dict.fromkeys(group_by)))
    for rec in read_score_records(path):
        if isinstance(rec, ReadError):
            ui._error(str(rec))
            if bad is not None:
                bad.append(rec)
            continue
        run.add(rec)
    return run


def _fmt(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _row(m: PairedDifference) -> list[str]:
    """n, A, B, B - A, CI and p of one metric's difference."""
    ci = "-" if m.ci is None else f"[{m.ci[0]:+.3f}, {m.ci[1]:+.3f}]"
    diff = "-" if m.difference is None else f"{m.difference:+.3f}"
    return [str(m.n), _fmt(m.mean_a), _fmt(m.mean_b), diff, ci, _fmt(m.p_value, 4)]


def _table(report: Comparison, a: pathlib.Path, b: pathlib.Path):
    from rich.table import Table

    from ..reports.fit_table import _cell

    level = report.method.confidence_level
    t = Table(title=f"B - A   (A: {a}, B: {b})")
    for col in ("metric", "n", "A", "B", "B - A", f"{level:.0%} CI", "p"):
        t.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for name, m in report.metrics.each():
        t.add_row(name, *_row(m))
    c = report.counts
    t.caption = _cell(
        f"matched {c.matched}; only in A {c.only_a}, only in B {c.only_b}; "
        f"errored in either {c.errored_either}; scored by one run only {c.scored_by_one_run}"
    )
    return t


def _group_tables(report: Comparison):
    """Per field of `by_group`: a row per group and metric."""
    from rich.table import Table

    from ..reports.fit_table import _cell

    for field, groups in (report.by_group or {}).items():
        t = Table(title=f"B - A by {field} (groups of A's records)")
        for col in (field, "metric", "n", "A", "B", "B - A", "CI", "p"):
            t.add_column(col, justify="left" if col in (field, "metric") else "right", no_wrap=True)
        for value, g in groups.items():
            for name, m in g.metrics.each():
                t.add_row(_cell(value), name, *_row(m))
        yield t


@app.command()
def compare(
    run_a: pathlib.Path = typer.Argument(
        ..., help="a `murgat score` output folder or its scores.jsonl"
    ),
    run_b: pathlib.Path = typer.Argument(..., help="the same, for the run compared with A"),
    out: pathlib.Path | None = typer.Option(None, "--out", help="write the report here (JSON)"),
    resamples: int = typer.Option(
        10_000, "--resamples", min=1, help="bootstrap resamples and permutations"
    ),
    group_by: list[str] = typer.Option(
        [],
        "--group-by",
        help="also compare per value of this field of A's "
        "records (a `categories` key, model, benchmark, question_type; repeatable)",
    ),
) -> None:
    """Compare two runs on the responses both scored (matched by id): mean difference B - A of
    MURGAT-S, coverage, F1 and accuracy, its 95% paired bootstrap interval and a paired
    permutation p-value."""
    from ..jsonl import dumps_record
    from ..metrics.compare import compare_runs
    from ..reports.fit_table import _cell
    from ..results import Comparison, as_model

    path_a, path_b = _records_file(run_a), _records_file(run_b)
    bad: list = []
    report = compare_runs(
        _read(path_a, group_by, bad), _read(path_b, bad=bad), n_resamples=resamples
    )
    runs = {"a": str(path_a), "b": str(path_b)}
    comparison = as_model(Comparison, {**report, "runs": runs})  # what a reader of --out gets
    ui.console.print(_table(comparison, path_a, path_b))
    for t in _group_tables(comparison):
        ui.console.print(t)
    for name, m in comparison.metrics.each():
        if m.note:
            ui.console.print(_cell(f"{name}: {m.note}"))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        text = dumps_record(comparison.dump(), indent=2, sort_keys=True)
        out.write_text(text + "\n", encoding="utf-8")
    if not comparison.counts.matched:
        ui._error("the runs have no scored response in common (matched by id)")
        raise typer.Exit(1)
    if bad:  # the numbers leave out the lines that could not be read
        ui._error(f"{len(bad)} record line(s) could not be read (above); they are left out")
        raise typer.Exit(1)
