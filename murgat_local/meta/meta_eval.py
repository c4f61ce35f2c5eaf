"""`murgat meta-eval`: each judge run against human labels, the judges ranked per subtask, and
(with `select`) the best judge per stage written as a run configuration.

The ranking rule lives here (`RANK_BY`, `best_per_subtask`): the command only prints.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

from ..jsonl import write_json
from ..meta_config import MetaEvalOptions
from ..reports.reliability import write_diagrams
from ..results import MetaEval, ReadError, ScoreRecord, layout, read_score_records, read_summary
from ..stages import YES_NO
from .agreement import align, evaluate, with_chance_agreement
from .calibrate import (
    Split,
    certify_best,
    certify_combination,
    judged_by_people,
    split_responses,
)
from .config_file import dumps as dumps_toml
from .escalation import Measured, cascade_certificates, escalation_section, judge_thresholds
from .select import Run, best_config
from .select import select as select_judges
from .views import ResponseView, from_record, label_sampling, label_views

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
    path: pathlib.Path
    report: MetaEval | None = None  # meta_eval.json, once written
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
    return summary.models, summary.config


def _read_run(
    run: pathlib.Path, keep_records: bool, bad: list[ReadError]
) -> tuple[dict[str, ResponseView], dict[str, ScoreRecord]]:
    """The run's responses as views by id, and (`keep_records`) its records by id; a line the
    record reader cannot read goes to `bad`."""
    judge, records = {}, {}
    for rec in read_score_records(_records(run)):
        if isinstance(rec, ReadError):
            bad.append(rec)
            continue
        view = from_record(rec)
        if view is not None:
            judge[view.id] = view
            if keep_records:  # panels are scored from the records' verdicts
                records[view.id] = rec
    return judge, records


# The settings, typed (their bounds and descriptions build the command's flags).
Options = MetaEvalOptions


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
    measured: dict[str, Measured] = {}  # run name -> its judges and paired judgements
    bad: list[ReadError] = []
    sampling = label_sampling(human[0])
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
                min_kept=o.min_kept,
                sampling=sampling,
            )
        )
        judges, config = _run_info(run)
        results[name]["judges"] = judges  # what weights_from reads: each stage's judge
        measured[name] = Measured(judges or {}, aligned)
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
        "labels_sampling": sampling,
    }
    if len(truths) == 2:
        # the second annotator against the first, with kappa and alpha as `murgat annotate` gives them
        report["inter_annotator"] = with_chance_agreement(
            truths[0], truths[1], resamples=o.resamples, seed=o.seed
        )
    # A choice among several runs is made on one part of the labelled responses and certified
    # on the other; one run is no choice: its certificate may use every label.
    split = _split(truths[0], o) if len(measured) > 1 and o.certify is not None else None
    if o.certify is not None:
        report["split"] = (
            split.as_dict()
            if split is not None
            else {"note": "one run: nothing is chosen, every labelled response certifies"}
        )
        report["min_kept"] = o.min_kept
        report["certification"] = certify_best(
            {n: m.aligned for n, m in measured.items()},
            split,
            target=o.certify,
            alpha=o.alpha,
            min_kept=o.min_kept,
        )
        first = {
            stage: measured[c["run"]].judges.get(stage)
            for stage, c in report["certification"].items()
        }
        report["cascades"] = _cascades(measured, first, split, o)
    result = MetaEvalResult(out / layout.META_EVAL, label_problems=problems, bad=bad)
    if select is not None:
        try:
            _select(report, results, selectable, truths[0], human[0], o, select, measured, split)
            result.select = select
        except ValueError as e:
            # The measurements stand without a choice: written, with why nothing was chosen.
            result.error = str(e)
            report["selection"] = {"error": str(e), "config": None}
    out.mkdir(parents=True, exist_ok=True)
    result.report = MetaEval.model_validate(report)
    write_json(result.path, result.report)
    result.diagrams = write_diagrams(result.report, out)
    return result


def _measured(row: dict) -> str:
    if row["value"] is None:
        return row.get("note") or f"{row['statistic']} undefined"
    return f"{row['statistic']} {row['value']:.4f} on {row['n']}"


def _split(truth: dict, o: Options) -> Split:
    return split_responses(list(truth), seed=o.split_seed, fraction=o.select_fraction)


def _split_says(split: Split | None, labelled: int) -> str:
    if split is not None:
        return split.says()
    return f"one run: nothing chosen, certified on all {labelled} labelled responses"


def _cascades(
    measured: dict[str, Measured], first: dict, split: Split | None, o: Options
) -> list[dict]:
    """The cascades `--escalate-to` can ask after `first` (stage -> judge), certified on the
    certification part (the first judge was chosen on the other)."""
    assert o.certify is not None
    return cascade_certificates(
        measured,
        first,
        ids=None if split is None else split.certification,
        rank_ids=None if split is None else split.selection,
        target=o.certify,
        alpha=o.alpha,
        min_kept=o.min_kept,
        seed=o.split_seed,
    )


def _select(
    report,
    results,
    selectable,
    truth,
    labels,
    o: Options,
    select: pathlib.Path,
    measured: dict[str, Measured],
    split: Split | None,
) -> None:
    """The best judge per stage (a run's, or a panel of them) as a configuration file at
    `select`, its choices in `report["selection"]`: chosen on the split's selection part,
    certified on its certification part (no split: on every labelled response). ValueError: no
    choice can be made."""
    chosen_on = truth if split is None else {r: v for r, v in truth.items() if r in split.selection}
    selection = select_judges(selectable, chosen_on, resamples=o.resamples, seed=o.seed)
    chosen = selection.pop("chosen")
    config = best_config(selectable, chosen)
    if o.certify is not None:
        records = {name: r.records for name, r in selectable.items()}
        report["certification"] = certify_combination(
            records,
            chosen,
            truth,
            target=o.certify,
            alpha=o.alpha,
            min_kept=o.min_kept,
            split=split,
        )
        # A panel's vote carries no p_yes: no cascade starts with it.
        first = {s: chosen[s].model if chosen[s].rule is None else None for s in YES_NO}
        report["cascades"] = _cascades(measured, first, split, o)
        config["escalation"] = escalation_section(
            report["certification"],
            str(labels),
            judge_thresholds(results),
            cascades=report["cascades"],
            split=split,
            min_kept=o.min_kept,
        )
    select.parent.mkdir(parents=True, exist_ok=True)

    def comment(text) -> str:  # one line, whatever a path holds
        return "# " + " ".join(str(text).split()) + "\n"

    header = comment(f"murgat meta-eval --select: the best judge per stage against {labels}")
    if o.certify is not None:
        header += comment(_split_says(split, len(truth)))
    header += "".join(
        comment(f"{stage}: {row['model']} ({_measured(row)})")
        for stage, row in selection["stages"].items()
    )
    select.write_text(f"{header}\n{dumps_toml(config)}", encoding="utf-8")
    report["selection"] = {
        **selection,
        "config": str(select),
        "chosen_on": None if split is None else split.as_dict(ids=False),
    }
