"""The summaries murgat writes: `murgat score`'s `summary.json`, `murgat generate`'s
`generation_summary.json`, `murgat run`'s `run_summary.json` and `murgat meta-eval`'s
`meta_eval.json`.

The numbers the tables, the report and the comparisons read are typed and bounded; the blocks
that record the run as it went (engines, stage counters, provenance, the cache) are typed too
(`summary_blocks`), each keeping a key it does not name. Every top-level key is named: an unknown
one is an error naming it (a newer murgat's file says so by its `schema_version` first).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from .fields import Count, Mode, NonNegative, Part, Score, Signed, d
from .meta_blocks import (
    Cascade,
    ChosenCertificate,
    InterAnnotator,
    RunAgreement,
    Sampling,
    Selection,
    SplitCounts,
)
from .summary_blocks import (
    CacheUse,
    Certification,
    CiMethod,
    Counters,
    EngineUse,
    FailedCalls,
    GenerationError,
    GenerationProvenance,
    Numbers,
    Provenance,
    ScoreError,
)
from .versions import Versioned


class Summary(Numbers, Versioned):
    """summary.json of `murgat score` and of each `murgat run` cell."""

    # A block of numbers keeps a key it does not name; the file's own keys are all named.
    model_config = ConfigDict(extra="forbid", strict=True)

    ci: CiMethod | None = d(description="how the intervals were computed")
    by_model: dict[str, Numbers] | None = d(
        description="the same numbers per responding model (when there are several)"
    )
    by_group: dict[str, dict[str, Numbers]] | None = d(
        description="the same numbers per `--group-by` field and value"
    )
    mode: Mode | None = d(description="the scoring rule: default, or the reference's")
    unparsed_verdicts: dict[str, Count] | None = d(
        description="per stage: judge answers that could not be read as a verdict"
    )
    errors_list: list[ScoreError] | None = d(
        description="each response that could not be scored: index, id, source, error"
    )
    stages: dict[str, Counters] | None = d(description="per stage: its judge's counters")
    certification: dict[str, Certification] | None = d(
        description="per escalated stage: verdicts decided per judge, and abstained"
    )
    judge_calls: FailedCalls | None = d(
        description="unique judge calls that got no verdict, against --max-failed-calls"
    )
    failure: str | None = d(description="why the run failed; null when it did not")
    engines: dict[str, EngineUse] | None = d(
        description="per engine: its identity and token counts"
    )
    models: dict[str, str] | None = d(description="stage -> its judge model")
    entail_routes: dict[str, str] | None = d(
        description="entailment routed per modality: each route's judge model"
    )
    warnings: list[str] | None = d(description="warnings about the judges")
    segments_decoded: Count | None = d(description="media segments decoded")
    cache: CacheUse | None = d(description="the verdict cache: path, what was set aside")
    provenance: Provenance | None = d(
        description="configuration, prompts, judges, versions and input digest"
    )
    wall_s: NonNegative | None = d(description="wall time of the run, in seconds")

    def groups(self, field: str) -> dict[str, Numbers]:
        """The numbers per value of one `--group-by` field (empty: not grouped by it)."""
        return (self.by_group or {}).get(field) or {}

    def judge_of(self, stage: str) -> str | None:
        """The model that judged `stage` (None: the summary does not say)."""
        return (self.models or {}).get(stage)

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration as its provenance records it (empty: none recorded)."""
        config = self.provenance.config if self.provenance is not None else None
        return config or {}

    def option(self, *path: str) -> Any:
        """A value of the run's configuration by its keys, or None (`Provenance.option`)."""
        return self.provenance.option(*path) if self.provenance is not None else None


class GenerationCell(Part):
    """One model x strategy cell of a generation: its answers and their QA accuracy."""

    model: str | None = d(description="the responding model")
    strategy: str | None = d(description="how it was asked: base, cite, posthoc, program, ...")
    rows: Count | None = d(description="answers written (questions x samples)")
    errors: Count | None = d(description="answers that could not be made")
    output: str | None = d(description="the cell's responses.jsonl")
    accuracy: Score | None = d(
        description="QA accuracy: correct / graded (unanswered count as wrong)"
    )
    graded: Count | None = d(description="answers graded (a gold answer, no error)")
    correct: Count | None = d(description="graded answers that are right")
    unanswered: Count | None = d(description="graded answers where no answer could be read")
    unanswered_rate: Score | None = d(description="unanswered / graded")
    graded_by_type: dict[str, Count] | None = d(description="graded answers per question type")
    answered: Count | None = d(description="graded answers where an answer was read")
    unanswered_ids: list[str | int] | None = d(description="the ids of the unanswered ones")
    answer_paths: dict[str, Count] | None = d(
        description="how the answers were read: boxed, answer_line, judge"
    )
    programs: dict[str, Count] | None = d(description="program strategy: how its plans ended")


class GenerationSummary(Versioned):
    """generation_summary.json of `murgat generate` and of `murgat run`'s generation.

    Per cell its answers and QA accuracy; the reasoning tax, calls, engines and provenance."""

    cells: dict[str, GenerationCell] | None = d(description="per cell (model/strategy)")
    reasoning_tax: dict[str, Signed | None] | None = d(
        description="per model: QA accuracy under cite minus under base"
    )
    programs: dict[str, Count] | None = d(description="program strategy: how all plans ended")
    calls: dict[str, Counters] | None = d(
        description="per responder, answer judge and program tool: its counters"
    )
    judge_calls: FailedCalls | None = d(
        description="unique calls that got no answer, against --max-failed-calls"
    )
    failure: str | None = d(description="why the run failed; null when it did not")
    engines: dict[str, EngineUse] | None = d(
        description="per engine: its identity and token counts"
    )
    errors_list: list[GenerationError] | None = d(
        description="each answer that could not be made: cell, id, error"
    )
    provenance: GenerationProvenance | None = d(
        description="configuration, prompts, models, dataset, subset and versions"
    )
    wall_s: NonNegative | None = d(description="wall time of the generation, in seconds")


class GridRow(GenerationCell):
    """A `murgat run` cell: its generation's answers and QA accuracy, and its scores."""

    coverage: Score | None = d(description="the cell's mean coverage")
    precision: Score | None = d(description="the cell's mean precision")
    recall: Score | None = d(description="the cell's mean recall")
    f1: Score | None = d(description="the cell's mean F1")
    murgat_s: Score | None = d(description="the cell's mean MURGAT-S")
    partial: Count | None = d(description="responses scored on partial data")
    scored: Count | None = d(description="responses scored (status ok)")
    scores: str | None = d(description="the cell's scores.jsonl")


class RunSummary(Versioned):
    """run_summary.json of `murgat run`: each cell's accuracy, scores.

    Per grid cell its QA accuracy and scores; also the reasoning taxes, and where the generation summary and the tables are."""

    grid: dict[str, GridRow] | None = d(description="per cell (model/strategy)")
    reasoning_tax: dict[str, Signed | None] | None = d(
        description="per model: QA accuracy under cite minus under base"
    )
    generation: str | None = d(description="the generation's generation_summary.json")
    failure: str | None = d(description="why the generation failed; null when it did not")
    tables: list[str] | None = d(description="tables.md and tables.csv")
    warnings: list[str] | None = d(description="warnings about the judges, each once")


class MetaEval(Versioned):
    """meta_eval.json of `murgat meta-eval`: each run against human labels.

    Per run its agreement per subtask; the best run per subtask, and with --certify / --select the certificates and the choice."""

    runs: dict[str, RunAgreement] | None = d(
        description="per run: its agreement with the labels per subtask, and its judges"
    )
    best: dict[str, str | None] | None = d(description="per subtask: the best run")
    ranked_by: dict[str, str] | None = d(description="per subtask: the statistic ranked by")
    human: list[str] | None = d(description="the label files (a second: inter-annotator)")
    resamples: Count | None = d(description="bootstrap resamples of the intervals")
    seed: int | None = d(description="the bootstrap's seed")
    labels_sampling: Sampling | None = d(
        description="whether the labelled responses were drawn at random"
    )
    inter_annotator: InterAnnotator | None = d(
        description="the second label file against the first"
    )
    split: SplitCounts | None = d(
        description="--certify: the labelled responses chosen on and certified on"
    )
    min_kept: Count | None = d(description="--certify: verdicts kept at the least")
    certification: dict[str, ChosenCertificate] | None = d(
        description="--certify: per stage, the chosen judge's certificate"
    )
    cascades: list[Cascade] | None = d(description="--certify: the certified cascades")
    selection: Selection | None = d(description="--select: the judges chosen per stage")

    def best_run(self, subtask: str) -> str | None:
        """The run ranked best on `subtask` (None: none, or not ranked)."""
        return (self.best or {}).get(subtask)
