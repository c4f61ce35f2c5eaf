"""A `murgat score` run's `summary.json` and a `murgat run` grid's `run_summary.json`.

The numbers the tables, the report and the comparisons read are typed; the parts that record
the run as it went (engines, stage counters, provenance, the cache) are kept as the objects they
are. Every top-level key is named: an unknown one is an error naming it (a newer murgat's file
says so by its `schema_version` first).
"""

from __future__ import annotations

from typing import Any

from .records import Number
from .versions import Versioned

Interval = list[Number]  # [low, high]


class Summary(Versioned):
    """summary.json of `murgat score` and of each `murgat run` cell."""

    responses: int | None = None
    scored: int | None = None
    errors: int | None = None
    coverage: Number | None = None
    precision: Number | None = None
    recall: Number | None = None
    f1: Number | None = None
    murgat_s: Number | None = None
    qa_accuracy: Number | None = None
    coverage_ci: Interval | None = None
    precision_ci: Interval | None = None
    recall_ci: Interval | None = None
    f1_ci: Interval | None = None
    murgat_s_ci: Interval | None = None
    qa_accuracy_ci: Interval | None = None
    ci: dict[str, Any] | None = None  # how the intervals were computed
    ci_notes: dict[str, str] | None = None  # per metric: why its interval is missing or flat
    undefined: int | None = None
    partial: int | None = None
    complete_only: dict[str, Any] | None = None
    unanswered: int | None = None
    unanswered_rate: Number | None = None
    qa_graded: dict[str, int] | None = None
    by_model: dict[str, dict[str, Any]] | None = None  # the same numbers per responding model
    by_group: dict[str, Any] | None = None  # per `--group-by` field and value
    mode: str | None = None
    unparsed_verdicts: dict[str, int] | None = None
    errors_list: list[dict[str, Any]] | None = None
    stages: dict[str, dict[str, Any]] | None = None  # per stage: its judge's counters
    certification: dict[str, Any] | None = None
    judge_calls: dict[str, Any] | None = None
    failure: str | None = None  # why the run failed; null when it did not
    engines: dict[str, dict[str, Any]] | None = None
    models: dict[str, str] | None = None  # stage -> the judge model
    entail_routes: Any = None
    warnings: list[str] | None = None
    segments_decoded: int | None = None
    cache: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    wall_s: Number | None = None


class RunSummary(Versioned):
    """run_summary.json of `murgat run`: each cell's accuracy, scores.

    Per grid cell its QA accuracy and scores; also the reasoning taxes, and where the generation summary and the tables are."""

    grid: dict[str, dict[str, Any]] | None = None
    reasoning_tax: dict[str, Any] | None = None
    generation: str | None = None  # the generation's summary.json
    failure: str | None = None
    tables: list[str] | None = None
    warnings: list[str] | None = None
