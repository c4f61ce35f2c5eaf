"""The blocks of `summary.json` and `generation_summary.json` that record how the run went: the
numbers per model and per group, the stage counters, the engines, the cache, the certification
and the provenance of every number.

Each block names the keys murgat writes (`Block`): a key it does not name, from an older or a
newer murgat, is kept as written rather than refused, so a run folder stays readable.
"""

from __future__ import annotations

from typing import Any

from .fields import Block, Count, Interval, Mode, NonNegative, Part, Score, d


class CompleteOnly(Part):
    """The means again, over the responses scored on every verdict they needed."""

    responses: Count | None = d(description="responses scored on every verdict")
    coverage: Score | None = d(description="their mean coverage")
    precision: Score | None = d(description="their mean precision")
    recall: Score | None = d(description="their mean recall")
    f1: Score | None = d(description="their mean F1")
    murgat_s: Score | None = d(description="their mean MURGAT-S")
    coverage_ci: Interval | None = d(description="95% bootstrap interval of `coverage`")
    precision_ci: Interval | None = d(description="95% bootstrap interval of `precision`")
    recall_ci: Interval | None = d(description="95% bootstrap interval of `recall`")
    f1_ci: Interval | None = d(description="95% bootstrap interval of `f1`")
    murgat_s_ci: Interval | None = d(description="95% bootstrap interval of `murgat_s`")
    ci_notes: dict[str, str] | None = d(
        description="per metric: why its interval is missing or flat"
    )


class Numbers(Block):
    """The scores and counts of a set of responses: the whole run's (`Summary`), or one
    responding model's or one group's (`by_model`, `by_group`)."""

    responses: Count | None = d(description="responses in the input")
    scored: Count | None = d(description="responses scored (status ok)")
    errors: Count | None = d(description="responses that could not be scored")
    coverage: Score | None = d(description="mean coverage over the scored responses")
    precision: Score | None = d(description="mean citation precision")
    recall: Score | None = d(description="mean citation recall")
    f1: Score | None = d(description="mean F1")
    murgat_s: Score | None = d(description="mean MURGAT-S")
    qa_accuracy: Score | None = d(
        description="correct answers / graded questions (unanswered count as wrong); a response "
        "that could not be scored is graded when its answer is known"
    )
    coverage_ci: Interval | None = d(description="95% bootstrap interval of `coverage`")
    precision_ci: Interval | None = d(description="95% bootstrap interval of `precision`")
    recall_ci: Interval | None = d(description="95% bootstrap interval of `recall`")
    f1_ci: Interval | None = d(description="95% bootstrap interval of `f1`")
    murgat_s_ci: Interval | None = d(description="95% bootstrap interval of `murgat_s`")
    qa_accuracy_ci: Interval | None = d(description="95% bootstrap interval of `qa_accuracy`")
    ci_notes: dict[str, str] | None = d(
        description="per metric: why its interval is missing or flat"
    )
    undefined: Count | None = d(description="scored responses whose MURGAT-S is undefined")
    partial: Count | None = d(
        description="responses scored on partial data (some verdicts missing)"
    )
    complete_only: CompleteOnly | None = d(description="the means without the partial responses")
    unanswered: Count | None = d(description="graded questions whose response gave no answer")
    unanswered_rate: Score | None = d(description="unanswered / graded questions")
    qa_graded: dict[str, Count] | None = d(description="graded questions per question type")
    unparsed_citations: Count | None = d(
        description="default mode: bracketed text that looks like a citation and was not read "
        "as one, over every sentence (each sentence's `unparsed_citations`)"
    )

    def ci_note(self, metric: str) -> str | None:
        """Why `metric`'s interval is missing or flat (None: it has none to explain)."""
        return (self.ci_notes or {}).get(metric)


class CiMethod(Block):
    """How the bootstrap intervals were computed."""

    method: str | None = d(description="the bootstrap used")
    confidence_level: Score | None = d(description="the intervals' confidence level")
    resamples: Count | None = d(description="bootstrap resamples (0: intervals disabled)")
    seed: int | None = d(description="the bootstrap's seed")
    note: str | None = d(description="why there are no intervals")


class ScoreError(Block):
    """A response that could not be scored."""

    index: Count | None = d(description="its position in the input (0-based)")
    id: str | int | None = d(description="its id")
    source: str | None = d(description='where it was in the input: "line 3", "item 2"')
    error: str | None = d(description="why it could not be scored")


class GenerationError(Block):
    """An answer that could not be made."""

    cell: str | None = d(description="the cell (model/strategy) that was to make it")
    id: str | int | None = d(description="the question's id")
    error: str | None = d(description="why it could not be made")


class Counters(Block):
    """A judge's calls over the run. A panel, a cascade or a stage routed by modality adds up its
    members' counts and keeps each member's own (`members`, `routes`)."""

    calls: Count | None = d(description="calls requested, before deduplication")
    unique: Count | None = d(description="distinct calls")
    cache_hits: Count | None = d(description="distinct calls answered from the verdict cache")
    model_calls: Count | None = d(description="distinct calls sent to the model")
    unparsed: Count | None = d(description="answers that could not be read as a verdict")
    errors: Count | None = d(description="calls that failed or were refused")
    failed: Count | None = d(
        description="distinct calls without a verdict (unparsed, refused or failed)"
    )
    cache_rejected: Count | None = d(description="cached rows that did not validate, asked again")
    unreached: Count | None = d(description="calls whose cited media did not reach the model whole")
    reached_unknown: Count | None = d(description="calls whose media tokens could not be counted")
    cited_unknown: Count | None = d(
        description="calls whose media parts were not counted one by one"
    )
    p_yes_unknown: Count | None = d(description="yes/no verdicts without a p_yes")
    thought_cut: Count | None = d(description="thinking judges' thoughts cut at their budget")
    reached: dict[str, Count] | None = d(
        description="prompt tokens per media modality that reached the model"
    )
    wall_s: NonNegative | None = d(description="seconds spent judging")
    votes: Count | None = d(description="a panel: distinct decisions")
    ties: Count | None = d(description="a panel: decisions tied (decided NO)")
    undecided: Count | None = d(description="a panel: decisions no member gave a verdict for")
    decided: dict[str, Count] | None = d(description="a cascade: verdicts decided per judge")
    abstained: Count | None = d(description="a cascade: verdicts no judge decided")
    members: dict[str, Counters] | None = d(description="a panel or cascade: each member's own")
    routes: dict[str, Counters] | None = d(
        description="a stage routed by modality: each route's own, with its `model`"
    )
    model: str | None = d(description="a route: its judge model")


class CascadeJudge(Block):
    """One judge of a cascade and the threshold its verdicts needed."""

    judge: str | None = d(description="the judge")
    threshold: Score | None = d(description="its certified threshold (null: nothing certified)")
    certain: bool | None = d(description="its verdicts stand by construction (human labels)")


class Certification(Block):
    """An escalated stage: who decided its verdicts, against the certified target."""

    decided_by: dict[str, Count] | None = d(description="verdicts decided per judge")
    abstained: Count | None = d(description="verdicts no judge decided")
    verdicts: Count | None = d(description="verdicts in all")
    judges: list[CascadeJudge] | None = d(description="the cascade, in order")
    target: Score | None = d(description="the agreement the thresholds were certified for")
    alpha: Score | None = d(description="the certificate's risk")
    labels: str | None = d(description="the human labels the thresholds were certified on")
    certified: bool | None = d(description="the thresholds are a certified cascade's")


class FailedCalls(Block):
    """Distinct calls that got no verdict, against `--max-failed-calls`."""

    total: Count | None = d(description="distinct calls")
    failed: Count | None = d(description="of which without a verdict")
    failed_fraction: Score | None = d(description="failed / total")
    max_failed_calls: NonNegative | None = d(description="the share above which the run fails")


class EngineUse(Block):
    """An engine: what it is and what it did."""

    identity: str | None = d(description="what makes two engines give the same verdicts")
    started: bool | None = d(description="whether it was started")
    calls: Count | None = d(description="requests it answered")
    prompt_tokens: Count | None = d(description="prompt tokens")
    output_tokens: Count | None = d(description="output tokens")
    wall_s: NonNegative | None = d(description="seconds it spent")
    parse_failures: Count | None = d(description="answers not in the requested shape")
    refused: Count | None = d(description="requests it refused")
    batches: Count | None = d(description="batches it ran")
    batch_splits: Count | None = d(description="batches split to isolate a rejected request")
    calls_per_s: NonNegative | None = d(description="calls / wall_s")
    output_tokens_per_s: NonNegative | None = d(description="a generation: output tokens / wall_s")


class CacheUse(Block):
    """The verdict cache of the run."""

    path: str | None = d(description="the cache file")
    set_aside: str | None = d(description="where an unreadable cache file was moved")
    rejected_rows: Count | None = d(description="cached rows that did not validate")


class FileDigest(Block):
    """A file the run read, as it was."""

    path: str | None = d(description="the file")
    bytes: Count | None = d(description="its size")
    sha256: str | None = d(description="its SHA-256")


class PromptUse(Block):
    """The prompt template a stage rendered."""

    template: str | None = d(description="the template's name")
    digest: str | None = d(description="its digest")


class JudgeUse(Block):
    """A stage's judge as the run used it."""

    model: str | None = d(description="the model name")
    engine: str | None = d(description="the engine kind (vllm, openai, panel, cascade, ...)")
    identity: str | None = d(description="what makes two engines give the same verdicts")
    detail: dict[str, Any] | None = d(
        description="the engine's own account of its identity (its shape is the engine's)"
    )
    neutralization: dict[str, Any] | None = d(
        description="which special tokens its untrusted text was stripped of"
    )


class Machine(Block):
    """The CPU the run's in-process engines ran on."""

    model: str | None = d(description="the CPU model")
    cores: Count | None = d(description="its cores")
    isa: list[str] | None = d(description="the instruction sets that matter")
    emulated: str | None = d(description="the instruction set emulated for a measurement")
    dtype: str | None = d(description="the dtype vLLM's CPU build chooses here")
    dtype_why: str | None = d(description="why that dtype")
    platform: str | None = d(description="the operating system")


# The run's configuration as `RunConfig.model_dump` writes it: its shape is the configuration's
# (config.py, above this package), and it grows with every option.
Config = dict[str, Any]


class Provenance(Block):
    """What a score run's numbers depend on, beside the per-record traces."""

    config: Config | None = d(description="the run's configuration, every option")
    mode: Mode | None = d(description="the scoring rule: default, or the reference's")
    media_root: str | None = d(description="the media root")
    prompts: dict[str, PromptUse] | None = d(description="per stage: its prompt template")
    judges: dict[str, JudgeUse] | None = d(description="per stage: its judge")
    versions: dict[str, str | None] | None = d(description="python and the packages that matter")
    machine: Machine | None = d(description="the machine")
    input: FileDigest | None = d(description="the responses file")

    def option(self, *path: str) -> Any:
        """A configuration value by its keys (`option("media", "audio_point_window")`), or None."""
        value: Any = self.config
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value


class DatasetUse(Block):
    """The dataset a generation read."""

    format: str | None = d(description="its file format")
    benchmark: str | None = d(description="the benchmark")
    media_root: str | None = d(description="its media root")


class Stratum(Block):
    """One stratum of a drawn subset."""

    chosen: Count | None = d(description="questions drawn")
    available: Count | None = d(description="questions there were")


class SubsetUse(Block):
    """The subset of the dataset a generation drew."""

    sample: Count | None = d(description="questions drawn")
    seed: int | None = d(description="the draw's seed")
    stratify: str | None = d(description="the field stratified on")
    population: Count | None = d(description="questions drawn from")
    strata: dict[str, Stratum] | None = d(description="per stratum: drawn and available")


class GenerationProvenance(Block):
    """What a generation's answers depend on."""

    config: Config | None = d(description="the run's configuration, every option")
    prompts: dict[str, str] | None = d(description="per prompt template: its digest")
    models: dict[str, dict[str, Any] | None] | None = d(
        description="per engine: its own account of its identity"
    )
    media_root: str | None = d(description="the media root")
    from_file: FileDigest | None = d(description="the responses file answers were read from")
    versions: dict[str, str | None] | None = d(description="python and the packages that matter")
    input: FileDigest | None = d(description="the dataset file")
    dataset: DatasetUse | None = d(description="the dataset")
    subset: SubsetUse | None = d(description="the subset drawn (null: the whole dataset)")


Counters.model_rebuild()

__all__ = [
    "CacheUse",
    "Certification",
    "CiMethod",
    "CompleteOnly",
    "Counters",
    "EngineUse",
    "FailedCalls",
    "GenerationError",
    "GenerationProvenance",
    "Interval",
    "Numbers",
    "Provenance",
    "ScoreError",
]
