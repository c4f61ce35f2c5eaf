"""`murgat meta-eval`: which judge agrees with people, subtask by subtask."""

from __future__ import annotations

import pathlib
from typing import List

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app

# The statistic each subtask's judges are ranked by (higher is better).
RANK_BY = {"subtask1": "balanced_accuracy", "subtask2": "f1", "subtask3": "balanced_accuracy",
           "murgat_s": "pearson"}


def _records(run: pathlib.Path) -> pathlib.Path:
    path = run / "scores.jsonl" if run.is_dir() else run
    if not path.is_file():
        cli._fail(f"{run} holds no scores.jsonl (a `murgat score` output folder is expected)")
    return path


def best_per_subtask(results: dict[str, dict]) -> dict[str, str | None]:
    best = {}
    for block, stat in RANK_BY.items():
        scored = [(r[block].get(stat), name) for name, r in results.items() if r[block].get(stat) is not None]
        best[block] = max(scored)[1] if scored else None
    return best


@app.command("meta-eval")
def meta_eval(
    runs: List[pathlib.Path] = typer.Argument(..., help="`murgat score` output folders (one per judge setup)"),
    human: List[pathlib.Path] = typer.Option(..., "--human", help="human labels (JSONL); a second file adds inter-annotator agreement"),
    out: pathlib.Path = typer.Option(..., "--out", help="output folder (meta_eval.json)"),
    resamples: int = typer.Option(10_000, "--resamples", help="bootstrap resamples for the intervals"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Measure each judge run against human labels: subtasks 1-3 and score correlations."""
    from ..inputs.responses import iter_records
    from ..jsonl import dumps_record
    from ..meta.agreement import evaluate
    from ..meta.views import from_record, label_views
    from ..reports.table import meta_table

    if len(human) > 2:
        cli._fail("--human takes one label file, or two for inter-annotator agreement")
    truths = []
    for path in human:
        if not path.is_file():
            cli._fail(f"label file {path} does not exist")
        views, problems = label_views(path)
        for p in problems:
            cli._error(f"{path}: {p}")
        truths.append(views)
    results: dict[str, dict] = {}
    for run in runs:
        judge = {}
        for _, _, obj in iter_records(_records(run)):
            view = from_record(obj) if isinstance(obj, dict) else None
            if view is not None:
                judge[view.id] = view
        name = run.name if run.is_dir() else run.parent.name
        if name in results:
            name = str(run)
        results[name] = evaluate(judge, truths[0], resamples=resamples, seed=seed)
    report: dict = {"runs": results, "best": best_per_subtask(results), "ranked_by": RANK_BY,
                    "human": [str(p) for p in human], "resamples": resamples, "seed": seed}
    if len(truths) == 2:
        report["inter_annotator"] = evaluate(truths[1], truths[0], resamples=resamples, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta_eval.json").write_text(dumps_record(report, indent=2, sort_keys=True), encoding="utf-8")
    cli.console.print(meta_table(report))
    cli.console.print(f"wrote {out / 'meta_eval.json'}", markup=False)
