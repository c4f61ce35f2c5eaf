"""`murgat meta-eval`: which judge agrees with people, subtask by subtask."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app


@app.command("meta-eval")
def meta_eval(
    runs: list[pathlib.Path] = typer.Argument(
        ..., help="`murgat score` output folders (one per judge setup)"
    ),
    human: list[pathlib.Path] = typer.Option(
        ..., "--human", help="human labels (JSONL); a second file adds inter-annotator agreement"
    ),
    out: pathlib.Path = typer.Option(..., "--out", help="output folder (meta_eval.json)"),
    resamples: int = typer.Option(
        10_000, "--resamples", help="bootstrap resamples for the intervals"
    ),
    seed: int = typer.Option(0, "--seed"),
    select: pathlib.Path | None = typer.Option(
        None,
        "--select",
        help="write the best judge per stage (a run's judge, or a panel of them) as a "
        "config for `murgat score --config`",
    ),
    certify: float | None = typer.Option(
        None,
        "--certify",
        help="certify per yes/no stage the lowest confidence threshold at which the judge agrees "
        "with people at least this often (e.g. 0.9), with probability >= 1 - --alpha",
    ),
    alpha: float = typer.Option(
        0.1, "--alpha", help="--certify's risk: the guarantee holds with probability 1 - alpha"
    ),
    min_kept: int = typer.Option(
        50,
        "--min-kept",
        help="--certify tests thresholds from the strictest that keeps at least this many verdicts",
    ),
    split_seed: int = typer.Option(
        0,
        "--split-seed",
        help="with --certify and several runs: the seed of the random split of the labelled "
        "responses into a part that chooses the judge and a part that certifies it",
    ),
    select_fraction: float = typer.Option(
        0.5,
        "--select-fraction",
        help="the share of the labelled responses that chooses; the others certify",
    ),
) -> None:
    """Measure each judge run against human labels: subtasks 1-3 and score correlations."""
    from ..meta.meta_eval import Options, Unusable
    from ..meta.meta_eval import meta_eval as measure

    if len(human) > 2:
        cli._fail("--human takes one label file, or two for inter-annotator agreement")
    if certify is not None and not 0 < certify < 1:
        cli._fail(f"--certify takes the agreement to certify, in (0, 1), not {certify}")
    if not 0 < alpha < 1:
        cli._fail(f"--alpha takes a probability in (0, 1), not {alpha}")
    if min_kept < 1:
        cli._fail(f"--min-kept takes a number of verdicts, 1 or more, not {min_kept}")
    if not 0 < select_fraction < 1:
        cli._fail(f"--select-fraction takes a share in (0, 1), not {select_fraction}")
    options = Options(resamples, seed, certify, alpha, min_kept, split_seed, select_fraction)
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

    report = result.report
    cli.console.print(meta_table(report))
    split = report.get("split")
    if split is not None:
        cli.console.print(
            (
                f"chosen on {split['selection']} labelled responses, certified on "
                f"{split['certification']} others (--split-seed {split['seed']}, "
                f"--select-fraction {split['fraction']:g})"
                if "seed" in split
                else f"{split['note']}"
            ),
            markup=False,
        )
    for stage, c in (report.get("certification") or {}).items():
        who = c.get("judge") or c.get("run")
        cli.console.print(
            f"certified {stage} ({who}): "
            + (
                f"threshold {c['threshold']:.3f}, keeps {c['coverage']:.0%} of {c['n']} verdicts"
                if c["threshold"] is not None
                else f"no threshold: every verdict escalated ({c['note']})"
            ),
            markup=False,
        )
    for stage in ("verifiable", "entail"):
        mine = [c for c in report.get("cascades") or () if c["stage"] == stage]
        if mine:
            some = sum(1 for c in mine if all(s["threshold"] is not None for s in c["steps"]))
            orders = f"{len(mine)} order{'s' if len(mine) != 1 else ''}"
            cli.console.print(
                f"cascades {stage}: {orders} after {mine[0]['judges'][0]}, each judge certified "
                f"on what reaches it; {some} with a threshold for every judge "
                "(meta_eval.json `cascades`)",
                markup=False,
            )
    sampling = report.get("labels_sampling") or {}
    if not sampling.get("random"):
        cli.console.print(f"no PPI estimate: {sampling.get('note')}", markup=False)
    if result.select is not None:
        cli.console.print(choices_table(report["selection"]))
        cli.console.print(correlation_table(report))
        cli.console.print(f"wrote {result.select}", markup=False)
    cli.console.print(f"wrote {result.path}", markup=False)
    if result.diagrams:
        cli.console.print(
            f"wrote {len(result.diagrams)} reliability diagrams in {result.path.parent}",
            markup=False,
        )
