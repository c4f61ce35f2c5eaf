"""`murgat meta-eval`: each judge run against human labels, the judges ranked per subtask, and
(with `select`) the best judge per stage written as a run configuration.

The ranking rule lives here (`RANK_BY`, `best_per_subtask`): the command only prints.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

from ..jsonl import dumps_record
from ..reports.reliability import write_diagrams
from ..results import ReadError, layout, read_score_records, read_summary
from .agreement import align, evaluate, with_chance_agreement
from .calibrate import (
    certify_best,
    certify_combination,
    escalation_section,
    judge_thresholds,
    judged_by_people,
)
from .config_file import dumps as dumps_toml
from .select import Run, best_config
from .select import select as select_judges
from .views import from_record, label_views

# The statistic each subtask's judges are ranked by (higher is better).
RANK_BY = {
    "subtask1": "balanced_accuracy",
    "subtask2": "f1",
    "subtask3": "balanced_accuracy",
    "murgat_s": "pearson",
}


class Unusable(ValueError):
    """An input meta-eval cannot read (a usage error: nothing was measured)."""


@dataclass
class MetaEvalResult:
    report: dict  # meta_eval.json
    path: pathlib.Path
    diagrams: list = field(default_factory=list)
    select: pathlib.Path | None = None  # the configuration written, if asked and made
    label_problems: list[str] = field(default_factory=list)  # rows of the labels not used
    error: str | None = None  # why the selection failed (the report is still written)
    bad: list[ReadError] = field(default_factory=list)  # record lines left out of the numbers


def best_per_subtask(results: dict[str, dict]) -> dict[str, str | None]:
    """Per subtask, the run with the highest `RANK_BY` statistic (None: no run has it)."""
    best = {}
    for block, stat in RANK_BY.items():
        scored = [
            (r[block].get(stat), name)
            for name, r in results.items()
            if r[block].get(stat) is not None
        ]
        best[block] = max(scored)[1] if scored else None
    return best


def _records(run: pathlib.Path) -> pathlib.Path:
    path = layout.scores_file(run)
    if not path.is_file():
        raise Unusable(f"{run} holds no scores.jsonl (a `murgat score` output folder is expected)")
    return path


def _run_info(run: pathlib.Path) -> tuple[dict | None, dict]:
    """A run's judges per stage (summary.json's `models`) and its resolved configuration; (None,
    {}) when it has no summary that can be read."""
    summary = read_summary(layout.summary_beside(run))
    if isinstance(summary, ReadError):
        return None, {}
    return summary.models, (summary.provenance or {}).get("config") or {}


def _read_run(run: pathlib.Path, keep_records: bool, bad: list[ReadError]) -> tuple[dict, dict]:
    """The run's responses as views by id, and (`keep_records`) its records by id; a line the
    record reader cannot read goes to `bad`."""
    judge, records = {}, {}
    for rec in read_score_records(_records(run)):
        if isinstance(rec, ReadError):
            bad.append(rec)
            continue
        obj = rec.dump()
        view = from_record(obj)
        if view is not None:
            judge[view.id] = view
            if keep_records:  # panels are scored from the records' verdicts
                records[view.id] = obj
    return judge, records


@dataclass(frozen=True)
class Options:
    resamples: int = 10_000
    seed: int = 0
    certify: float | None = None  # the agreement to certify per yes/no stage
    alpha: float = 0.1


def meta_eval(
    runs: list[pathlib.Path],
    human: list[pathlib.Path],
    out: pathlib.Path,
    options: Options,
    select: pathlib.Path | None = None,
) -> MetaEvalResult:
    """Measure each run in `runs` against the labels `human[0]` (a second file: inter-annotator
    agreement too); write OUT/meta_eval.json and the reliability diagrams, and with `select` the
    best judge per stage as a configuration. Unusable: a file that cannot be read."""
    o = options
    truths, problems = [], []
    for path in human:
        if not path.is_file():
            raise Unusable(f"label file {path} does not exist")
        views, found = label_views(path)
        problems += [f"{path}: {p}" for p in found]
        truths.append(views)
    results: dict[str, dict] = {}
    selectable: dict = {}  # run name -> its records, judges and configuration (for --select)
    bad: list[ReadError] = []
    for run in runs:
        judge, records = _read_run(run, select is not None, bad)
        name = run.name if run.is_dir() else run.parent.name
        if name in results:
            name = str(run)
        aligned = align(judge, truths[0])
        results[name] = evaluate(
            judge, truths[0], resamples=o.resamples, seed=o.seed, aligned=aligned
        )
        results[name].update(
            judged_by_people(
                judge,
                truths[0],
                aligned,
                resamples=o.resamples,
                seed=o.seed,
                certify_target=o.certify,
                alpha=o.alpha,
            )
        )
        judges, config = _run_info(run)
        results[name]["judges"] = judges  # what weights_from reads: each stage's judge
        if select is not None:
            if judges is None:
                raise Unusable(
                    f"{run} has no summary.json naming its judges: --select cannot tell them"
                )
            selectable[name] = Run(name, judges, records, config)
    report: dict = {
        "runs": results,
        "best": best_per_subtask(results),
        "ranked_by": RANK_BY,
        "human": [str(p) for p in human],
        "resamples": o.resamples,
        "seed": o.seed,
    }
    if len(truths) == 2:
        # the second annotator against the first, with kappa and alpha as `murgat annotate` gives them
        report["inter_annotator"] = with_chance_agreement(
            truths[0], truths[1], resamples=o.resamples, seed=o.seed
        )
    if o.certify is not None:
        report["certification"] = certify_best(results, report["best"])
    result = MetaEvalResult(report, out / "meta_eval.json", label_problems=problems, bad=bad)
    if select is not None:
        try:
            _select(report, results, selectable, truths[0], human[0], o, select)
            result.select = select
        except ValueError as e:
            result.error = str(e)
            return result
    out.mkdir(parents=True, exist_ok=True)
    result.path.write_text(dumps_record(report, indent=2, sort_keys=True), encoding="utf-8")
    result.diagrams = write_diagrams(report, out)
    return result


def _select(report, results, selectable, truth, labels, o: Options, select: pathlib.Path) -> None:
    """The best judge per stage (a run's, or a panel of them) as a configuration file at
    `select`, its choices in `report["selection"]`. ValueError: no choice can be made."""
    selection = select_judges(selectable, truth, resamples=o.resamples, seed=o.seed)
    chosen = selection.pop("chosen")
    config = best_config(selectable, chosen)
    if o.certify is not None:
        records = {name: r.records for name, r in selectable.items()}
        report["certification"] = certify_combination(
            records, chosen, truth, target=o.certify, alpha=o.alpha
        )
        config["escalation"] = escalation_section(
            report["certification"], str(labels), judge_thresholds(results)
        )
    select.parent.mkdir(parents=True, exist_ok=True)

    def comment(text) -> str:  # one line, whatever a path holds
        return "# " + " ".join(str(text).split()) + "\n"

    header = comment(f"murgat meta-eval --select: the best judge per stage against {labels}")
    header += "".join(
        comment(f"{stage}: {row['model']} ({row['statistic']} {row['value']:.4f} on {row['n']})")
        for stage, row in selection["stages"].items()
    )
    select.write_text(f"{header}\n{dumps_toml(config)}", encoding="utf-8")
    report["selection"] = {**selection, "config": str(select)}
