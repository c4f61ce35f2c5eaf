"""`murgat meta-eval`: which judge agrees with people, subtask by subtask."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.options import META
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app
from murgat_local.results import MetaEval


@app.command("meta-eval")
@takes("meta-eval")
def meta_eval(
    runs: list[pathlib.Path] = typer.Argument(
        ..., help="`murgat score` output folders (one per judge setup)"
    ),
    human: list[pathlib.Path] = typer.Option(
        ..., "--human", help="human labels (JSONL); a second file adds inter-annotator agreement"
    ),
    out: pathlib.Path = typer.Option(..., "--out", help="output folder (meta_eval.json)"),
    select: pathlib.Path | None = typer.Option(
        None,
        "--select",
        help="write the best judge per stage (a run's judge, or a panel of them) as a "
        "config for `murgat score --config`",
    ),
    *,
    given: Given,
) -> None:
    """Measure each judge run against human labels: subtasks 1-3 and score correlations."""
    from ..meta.meta_eval import Unusable
    from ..meta.meta_eval import meta_eval as measure
    from ..meta_config import MetaEvalOptions

    if len(human) > 2:
        cli._fail("--human takes one label file, or two for inter-annotator agreement")
    options = MetaEvalOptions(**{k: v for k, v in given.of(META).items() if v is not None})
    try:
        result = measure(runs, human, out, options, select)
    except Unusable as e:
        cli._fail(str(e))
    for problem in result.label_problems:
        cli._error(problem)
    for rec in result.bad:
        cli._error(str(rec))
    if result.error:
        cli._error(result.error)
        raise typer.Exit(1)
    _show(result)
    if result.bad:  # the numbers leave out the lines that could not be read
        cli._error(f"{len(result.bad)} record line(s) could not be read (above); they are left out")
        raise typer.Exit(1)


def _show(result) -> None:
    from ..reports.selection import choices_table, correlation_table
    from ..reports.table import meta_table

    report: MetaEval = result.report
    cli.console.print(meta_table(report))
    split = report.split
    if split is not None:
        cli.console.print(
            (
                f"chosen on {split.selection} labelled responses, certified on "
                f"{split.certification} others (--split-seed {split.seed}, "
                f"--select-fraction {split.fraction:g})"
                if split.seed is not None and split.fraction is not None
                else f"{split.note}"
            ),
            markup=False,
        )
    for stage, c in (report.certification or {}).items():
        cli.console.print(
            f"certified {stage} ({c.judge or c.run}): "
            + (
                f"threshold {c.threshold:.3f}, keeps {c.coverage or 0:.0%} of {c.n} verdicts"
                if c.threshold is not None
                else f"no threshold: every verdict escalated ({c.note})"
            ),
            markup=False,
        )
    for stage in ("verifiable", "entail"):
        mine = [c for c in report.cascades or () if c.stage == stage]
        if mine:
            some = sum(1 for c in mine if all(s.threshold is not None for s in c.steps))
            orders = f"{len(mine)} order{'s' if len(mine) != 1 else ''}"
            first = mine[0].judges[0] if mine[0].judges else "?"
            cli.console.print(
                f"cascades {stage}: {orders} after {first}, each judge certified "
                f"on what reaches it; {some} with a threshold for every judge "
                "(meta_eval.json `cascades`)",
                markup=False,
            )
    sampling = report.labels_sampling
    if sampling is None or not sampling.random:
        cli.console.print(f"no PPI estimate: {sampling.note if sampling else None}", markup=False)
    if result.select is not None:
        if report.selection is not None:
            cli.console.print(choices_table(report.selection))
        cli.console.print(correlation_table(report))
        cli.console.print(f"wrote {result.select}", markup=False)
    cli.console.print(f"wrote {result.path}", markup=False)
    if result.diagrams:
        cli.console.print(
            f"wrote {len(result.diagrams)} reliability diagrams in {result.path.parent}",
            markup=False,
        )
