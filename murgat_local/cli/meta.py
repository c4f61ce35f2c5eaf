"""`murgat meta-eval`: which judge agrees with people, subtask by subtask."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app

# The statistic each subtask's judges are ranked by (higher is better).
RANK_BY = {
    "subtask1": "balanced_accuracy",
    "subtask2": "f1",
    "subtask3": "balanced_accuracy",
    "murgat_s": "pearson",
}


def _records(run: pathlib.Path) -> pathlib.Path:
    from ..results import layout

    path = layout.scores_file(run)
    if not path.is_file():
        cli._fail(f"{run} holds no scores.jsonl (a `murgat score` output folder is expected)")
    return path


def _run_info(run: pathlib.Path) -> tuple[dict | None, dict]:
    """A run's judges per stage (summary.json's `models`) and its resolved configuration; (None,
    {}) when it has no summary that can be read."""
    from ..results import ReadError, layout, read_summary

    summary = read_summary(layout.summary_beside(run))
    if isinstance(summary, ReadError):
        return None, {}
    return summary.models, (summary.provenance or {}).get("config") or {}


def best_per_subtask(results: dict[str, dict]) -> dict[str, str | None]:
    best = {}
    for block, stat in RANK_BY.items():
        scored = [
            (r[block].get(stat), name)
            for name, r in results.items()
            if r[block].get(stat) is not None
        ]
        best[block] = max(scored)[1] if scored else None
    return best


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
) -> None:
    """Measure each judge run against human labels: subtasks 1-3 and score correlations."""
    from ..jsonl import dumps_record
    from ..meta.agreement import align, evaluate, with_chance_agreement
    from ..meta.calibrate import (
        certify_best,
        certify_combination,
        escalation_section,
        judge_thresholds,
        judged_by_people,
    )
    from ..meta.config_file import dumps as dumps_toml
    from ..meta.select import Run, best_config
    from ..meta.select import select as select_judges
    from ..meta.views import from_record, label_views
    from ..reports.reliability import write_diagrams
    from ..reports.selection import choices_table, correlation_table
    from ..reports.table import meta_table
    from ..results import ReadError, read_score_records

    if len(human) > 2:
        cli._fail("--human takes one label file, or two for inter-annotator agreement")
    if certify is not None and not 0 < certify < 1:
        cli._fail(f"--certify takes the agreement to certify, in (0, 1), not {certify}")
    if not 0 < alpha < 1:
        cli._fail(f"--alpha takes a probability in (0, 1), not {alpha}")
    truths = []
    for path in human:
        if not path.is_file():
            cli._fail(f"label file {path} does not exist")
        views, problems = label_views(path)
        for p in problems:
            cli._error(f"{path}: {p}")
        truths.append(views)
    bad: list = []  # record lines that could not be read: printed, left out, exit 1
    results: dict[str, dict] = {}
    selectable: dict = {}  # run name -> its records, judges and configuration (for --select)
    for run in runs:
        judge, records = {}, {}
        for rec in read_score_records(_records(run)):
            if isinstance(rec, ReadError):
                cli._error(str(rec))
                bad.append(rec)
                continue
            obj = rec.dump()
            view = from_record(obj)
            if view is not None:
                judge[view.id] = view
                if select is not None:  # panels are scored from the records' verdicts
                    records[view.id] = obj
        name = run.name if run.is_dir() else run.parent.name
        if name in results:
            name = str(run)
        aligned = align(judge, truths[0])
        results[name] = evaluate(judge, truths[0], resamples=resamples, seed=seed, aligned=aligned)
        results[name].update(
            judged_by_people(
                judge,
                truths[0],
                aligned,
                resamples=resamples,
                seed=seed,
                certify_target=certify,
                alpha=alpha,
            )
        )
        judges, config = _run_info(run)
        results[name]["judges"] = judges  # what weights_from reads: each stage's judge
        if select is not None:
            if judges is None:
                cli._fail(f"{run} has no summary.json naming its judges: --select cannot tell them")
            selectable[name] = Run(name, judges, records, config)
    report: dict = {
        "runs": results,
        "best": best_per_subtask(results),
        "ranked_by": RANK_BY,
        "human": [str(p) for p in human],
        "resamples": resamples,
        "seed": seed,
    }
    if len(truths) == 2:
        # the second annotator against the first, with kappa and alpha as `murgat annotate` gives them
        report["inter_annotator"] = with_chance_agreement(
            truths[0], truths[1], resamples=resamples, seed=seed
        )
    if certify is not None:
        report["certification"] = certify_best(results, report["best"])
    if select is not None:
        try:
            selection = select_judges(selectable, truths[0], resamples=resamples, seed=seed)
            chosen = selection.pop("chosen")
            config = best_config(selectable, chosen)
            if certify is not None:
                records = {name: r.records for name, r in selectable.items()}
                report["certification"] = certify_combination(
                    records, chosen, truths[0], target=certify, alpha=alpha
                )
                config["escalation"] = escalation_section(
                    report["certification"], str(human[0]), judge_thresholds(results)
                )
        except ValueError as e:
            cli._error(str(e))
            raise typer.Exit(1) from None
        select.parent.mkdir(parents=True, exist_ok=True)

        def comment(text) -> str:  # one line, whatever a path holds
            return "# " + " ".join(str(text).split()) + "\n"

        header = comment(
            f"murgat meta-eval --select: the best judge per stage against {human[0]}"
        ) + "".join(
            comment(
                f"{stage}: {row['model']} ({row['statistic']} {row['value']:.4f} on {row['n']})"
            )
            for stage, row in selection["stages"].items()
        )
        select.write_text(f"{header}\n{dumps_toml(config)}", encoding="utf-8")
        report["selection"] = {**selection, "config": str(select)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta_eval.json").write_text(
        dumps_record(report, indent=2, sort_keys=True), encoding="utf-8"
    )
    diagrams = write_diagrams(report, out)
    cli.console.print(meta_table(report))
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
    if select is not None:
        cli.console.print(choices_table(report["selection"]))
        cli.console.print(correlation_table(report))
        cli.console.print(f"wrote {select}", markup=False)
    cli.console.print(f"wrote {out / 'meta_eval.json'}", markup=False)
    if diagrams:
        cli.console.print(f"wrote {len(diagrams)} reliability diagrams in {out}", markup=False)
    if bad:  # the numbers leave out the lines that could not be read
        cli._error(f"{len(bad)} record line(s) could not be read (above); they are left out")
        raise typer.Exit(1)
