"""The summary of a `murgat generate` run: per cell accuracy and errors, calls, engines, and the
provenance of every number (configuration, prompts, models, dataset, subset, versions).

The accuracy and the reasoning tax are the metrics layer's (`metrics.run_summary.GenerationGrades`),
handed to the runner from above (`Grades`): the pipeline imports no metric (issue 27).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..inputs.benchmarks import Dataset
from ..results import GenerationRecord
from .programs import OUTCOMES, outcome_counts
from .provenance import file_digest, versions
from .runner import failed_calls


class Grades(Protocol):
    """How a `murgat generate` run's rows are graded: a cell's QA accuracy block, and the
    reasoning tax per model from (model, strategy, accuracy) per cell."""

    def cell(self, rows: Sequence[GenerationRecord]) -> dict: ...

    def taxes(
        self, accuracies: Iterable[tuple[str, str, float | None]]
    ) -> dict[str, float | None]: ...


def summarize(
    runner, dataset: Dataset, kept: Mapping[Any, Sequence[GenerationRecord]], t0: float
) -> dict:
    """`runner` is the `GenerateRunner` that wrote the rows `kept` (per cell, the fields kept);
    its `grades` grade them."""
    grades: Grades = runner.grades
    cells: dict[str, dict] = {}
    errors: list[dict] = []
    for cell, rows in kept.items():
        bad = [r for r in rows if r.status != "ok"]
        errors += [{"cell": cell.label, "id": r.id, "error": r.error} for r in bad]
        cells[cell.label] = {
            "model": cell.model,
            "strategy": cell.strategy.label,
            "rows": len(rows),
            "errors": len(bad),
            "output": str(runner.paths[cell]),
            **grades.cell(rows),
        }
        if (
            cell.strategy.name == "program"
        ):  # how its plans ended; `internal`: our bug, not the plan's
            cells[cell.label]["programs"] = outcome_counts(rows)
    summary: dict = {
        "cells": cells,
        "reasoning_tax": grades.taxes(
            (c["model"], c["strategy"], c["accuracy"]) for c in cells.values()
        ),
    }
    programs = [c["programs"] for c in cells.values() if "programs" in c]
    if programs:
        summary["programs"] = {k: sum(p[k] for p in programs) for k in OUTCOMES}
    judges = (
        list(runner.judges.values())
        + list(runner.answerers.values())
        + list(runner.toolers.values())
    )
    summary["calls"] = {
        **{f"generate:{n}": j.counters.as_dict() for n, j in runner.judges.items()},
        **{
            f"program:{n}": j.counters.as_dict()
            for n, j in runner.toolers.items()
            if j.counters.calls
        },
        **{
            f"answer:{n}": j.counters.as_dict()
            for n, j in runner.answerers.items()
            if j.counters.calls
        },
    }
    summary["judge_calls"] = calls = failed_calls(judges, runner.config.max_failed_calls)
    summary["failure"] = calls.pop("failure")
    summary["engines"] = {}
    for name, e in runner.engines.items():
        stats = e.stats.as_dict()
        stats["output_tokens_per_s"] = (
            round(stats["output_tokens"] / stats["wall_s"], 2) if stats["wall_s"] else None
        )
        summary["engines"][name] = {"identity": e.identity, "started": e.started, **stats}
    summary["errors_list"] = errors
    summary["provenance"] = {
        "config": runner.config.model_dump(mode="json"),
        "prompts": {n: t.digest for n, t in runner.prompts.items()},
        "models": {n: e.identity_detail for n, e in runner.engines.items()},
        "media_root": str(runner.media_root.resolve()),
        "from_file": file_digest(runner.from_file) if runner.from_file else None,
        "versions": versions(),
        "input": file_digest(dataset.path)
        if dataset.path.is_file()
        else {"path": str(dataset.path)},
        "dataset": {
            "format": dataset.format,
            "benchmark": dataset.name,
            "media_root": str(dataset.media_root) if dataset.media_root else None,
        },
        "subset": runner.subset.provenance() if runner.subset is not None else None,
    }
    summary["wall_s"] = round(time.perf_counter() - t0, 3)
    return summary
