"""The blocks of `murgat meta-eval`'s meta_eval.json: a judge run's agreement with people per
subtask, its calibration, certificates and corrected means, the certified cascades and the
judges `--select` chose.

Each block names every key murgat writes (`meta.agreement`, `meta.calibrate`, `meta.select`,
`meta.escalation`, `metrics.calibration`, `metrics.guarantees`); a key it does not name (an
older or a newer murgat's) is kept as written (`Block`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .fields import (
    Block,
    Count,
    Interval,
    NonNegative,
    Number,
    Score,
    Signed,
    SignedInterval,
    d,
    many,
)

# A correlation or a chance-corrected agreement: at most 1 (kappa and alpha may fall below -1
# only in degenerate data, never above 1).
AtMostOne = Annotated[int, Field(le=1)] | Annotated[float, Field(le=1, allow_inf_nan=False)]
# A correlation coefficient, and its percentile bootstrap interval.
Coefficient = Signed
CoefficientCI = SignedInterval
# A normal or t interval of a mean: it may reach past the scores' own bounds.
Span = Annotated[list[Number], Field(min_length=2, max_length=2)]


class Kappa(Block):
    """Cohen's kappa of two raters (`metrics.agreement.cohen_kappa`)."""

    n: Count | None = d(description="units labelled by both")
    value: AtMostOne | None = d(description="kappa (null: undefined, `note` says why)")
    observed: Score | None = d(description="the observed agreement")
    note: str | None = d(description="why kappa is undefined")


class Alpha(Block):
    """Krippendorff's alpha, nominal labels (`metrics.agreement.krippendorff_alpha`)."""

    units: Count | None = d(description="units coded by two or more")
    values: Count | None = d(description="pairable values")
    value: AtMostOne | None = d(description="alpha (null: undefined, `note` says why)")
    note: str | None = d(description="why alpha is undefined")


class Binary(Block):
    """A yes/no subtask: the judge's verdicts against the person's labels."""

    n: Count | None = d(description="pairs compared")
    accuracy: Score | None = d(description="share of verdicts equal to the label")
    balanced_accuracy: Score | None = d(
        description="mean of the recalls of YES and NO (null: the labels have one class)"
    )
    precision: Score | None = d(description="labelled YES / judged YES")
    recall: Score | None = d(description="judged YES / labelled YES")
    note: str | None = d(description="why a value is null")
    kappa: Kappa | None = d(description="inter-annotator: Cohen's kappa")
    alpha: Alpha | None = d(description="inter-annotator: Krippendorff's alpha")


class FactMatch(Block):
    """Subtask 2: the judge's atomic facts matched one to one with the person's."""

    n_sentences: Count | None = d(description="sentences both decomposed")
    judge_facts: Count | None = d(description="the judge's facts of those sentences")
    truth_facts: Count | None = d(description="the person's facts of those sentences")
    matched: Count | None = d(description="facts matched one to one")
    precision: Score | None = d(description="matched / judge facts")
    recall: Score | None = d(description="matched / truth facts")
    f1: Score | None = d(description="F1 of the two")
    rule: str | None = d(description="how a judge fact matches a truth fact")


class Correlation(Block):
    """A per-response score of the judge against the person's: its correlations."""

    n: Count | None = d(description="responses both scored")
    pearson: Coefficient | None = d(description="Pearson's r (null: undefined, see `note`)")
    spearman: Coefficient | None = d(description="Spearman's rho")
    kendall: Coefficient | None = d(description="Kendall's tau-b")
    pearson_ci: CoefficientCI | None = d(description="95% bootstrap interval of `pearson`")
    spearman_ci: CoefficientCI | None = d(description="95% bootstrap interval of `spearman`")
    note: str | None = d(description="why a value or an interval is missing")


class Responses(Block):
    """Which responses the judge and the person both annotated."""

    shared: Count | None = d(description="responses both annotated")
    only_judge: Count | None = d(description="responses only the judge annotated")
    only_truth: Count | None = d(description="responses only the person labelled")
    misaligned: Count | None = d(
        description="shared responses whose sentences differ (left out of the sentence stats)"
    )
    misaligned_examples: dict[str, str] = many(
        dict, "up to five misaligned responses: id -> the first difference"
    )


class Agreement(Block):
    """One annotation (a judge run's, a second person's) against the labels, per subtask."""

    responses: Responses | None = d(description="the responses compared")
    subtask1: Binary | None = d(description="verifiable-claim identification, per sentence")
    subtask2: FactMatch | None = d(description="atomic-fact decomposition")
    subtask3: Binary | None = d(description="attribution: joint entailment per matched fact")
    murgat_s: Correlation | None = d(description="MURGAT-S per response")
    coverage: Correlation | None = d(description="coverage per response")
    f1: Correlation | None = d(description="F1 per response")

    def pearson(self) -> float:
        """MURGAT-S's Pearson r against people, to rank by: -2 (below any r) when unknown."""
        r = None if self.murgat_s is None else self.murgat_s.pearson
        return -2.0 if r is None else float(r)

    def binary(self, subtask: str) -> Binary | None:
        """The yes/no block named `subtask` (subtask1, subtask3); None when absent."""
        return {"subtask1": self.subtask1, "subtask3": self.subtask3}.get(subtask)


class Bin(Block):
    """One bin of a reliability diagram."""

    low: Score | None = d(description="the bin's lowest p_yes")
    high: Score | None = d(description="the bin's highest p_yes (excluded but for the last)")
    count: Count | None = d(description="judgements in the bin")
    mean_confidence: Score | None = d(description="their mean p_yes (null: empty bin)")
    observed_frequency: Score | None = d(description="their share labelled YES (null: empty)")


class Calibration(Block):
    """A yes/no stage's p_yes against the labels (`metrics.calibration.calibration`)."""

    n: Count | None = d(description="judgements with a p_yes and a label")
    n_yes: Count | None = d(description="of them, labelled YES")
    ece: Score | None = d(description="expected calibration error, 15 equal-width bins")
    ece_ci: Interval | None = d(description="95% bootstrap interval of `ece`")
    brier: Score | None = d(description="mean squared error of p_yes")
    brier_ci: Interval | None = d(description="95% bootstrap interval of `brier`")
    auroc: Score | None = d(description="area under the ROC curve (null: one label only)")
    auroc_ci: Interval | None = d(description="95% bootstrap interval of `auroc`")
    bins: list[Bin] = many(list, "the reliability diagram, one entry per bin")
    notes: dict[str, str] = many(dict, "per value: why it or its interval is missing")
    judged: Count | None = d(description="judgements paired with a label")
    missing_p_yes: Count | None = d(description="of them, without a p_yes (left out)")

    def why(self, name: str) -> str | None:
        """Why the value `name` (ece, brier, auroc, p_yes) or its interval is missing."""
        return self.notes.get(name)


class ThresholdTest(Block):
    """One threshold of the fixed-sequence test, strictest first."""

    threshold: Score | None = d(description="the confidence threshold")
    kept: Count | None = d(description="verdicts at or above it")
    disagree: Count | None = d(description="of them, disagreeing with the label")
    p_value: Score | None = d(description="the exact binomial test's p-value (null: skipped)")
    result: Literal["rejected", "failed", "too few", "not reached"] | None = d(
        description="rejected (risk bounded), failed (stops), too few (skipped), not reached"
    )


class CertificateSplit(Block):
    """How the labelled items were divided before a certificate was made."""

    seed: int | None = d(description="the split's seed")
    fraction: Score | None = d(description="the share of the items that chose")
    n_select: Count | None = d(description="items the judge was chosen on")
    n_certify: Count | None = d(description="items it was certified on")
    selection_balanced_accuracy: Score | None = d(
        description="the chosen judge's balanced accuracy on the choosing items"
    )
    parts: Count | None = d(description="a cascade: parts the items were split into")
    part: Count | None = d(description="a cascade: this judge's part (1-based)")
    n_part: Count | None = d(description="a cascade: items of the part")
    n_reaching: Count | None = d(description="a cascade: items of the part reaching the judge")
    alpha_cascade: Score | None = d(description="a cascade: the whole cascade's alpha")


class Certificate(Block):
    """A certified confidence threshold (Trust or Escalate, `metrics.guarantees.certify`)."""

    threshold: Score | None = d(
        description="the certified threshold (null: nothing certified, every verdict escalated)"
    )
    target: Score | None = d(description="the agreement the kept verdicts must reach")
    alpha: Score | None = d(description="the test's error level")
    n: Count | None = d(description="the verdicts it was tested on")
    coverage: Score | None = d(description="share of them kept at the threshold")
    kept: Count | None = d(description="verdicts kept at the threshold")
    agreement: Score | None = d(description="the kept verdicts' observed agreement")
    risk_upper: Score | None = d(description="upper bound of their risk at 1 - alpha")
    tests: list[ThresholdTest] = many(list, "each grid threshold, strictest first")
    note: str | None = d(description="what was certified on what, or why nothing was")
    min_kept: Count | None = d(description="the sequence starts where this many are kept")
    split: CertificateSplit | None = d(description="how the items were divided (a choice)")
    missing_p_yes: Count | None = d(
        description="judgements without a p_yes, left out (a judge would escalate them)"
    )


class SplitCounts(Block):
    """The labelled responses divided at random: chosen on one part, certified on the other."""

    seed: int | None = d(description="--split-seed")
    fraction: Score | None = d(description="--select-fraction: the share that chooses")
    selection: Count | None = d(description="responses the choice was made on")
    certification: Count | None = d(description="responses the certificates were made on")
    selection_ids: list[str] = many(list, "the ids of the choosing responses")
    certification_ids: list[str] = many(list, "the ids of the certifying responses")
    note: str | None = d(description="why there is no split (one run: nothing chosen)")


class ChosenCertificate(Certificate):
    """A stage's certificate for the judge chosen: the best run's, or `--select`'s choice."""

    run: str | None = d(description="the run chosen (the best on the stage's subtask)")
    judge: str | None = d(description="--select: the stage's chosen judge")
    chosen_on: SplitCounts | None = d(
        description="the part the choice was made on (null: nothing chosen)"
    )


class Sampling(Block):
    """Whether the labelled responses were drawn at random (`meta.views.label_sampling`)."""

    random: bool | None = d(description="every label records one random asking order")
    seed: int | None = d(description="that order's seed")
    labelled: Count | None = d(description="responses labelled")
    note: str | None = d(description="why they are not known to be drawn at random")


class Mean(Block):
    """A mean with its normal interval."""

    n: Count | None = d(description="values averaged")
    mean: Number | None = d(description="their mean")
    ci: Span | None = d(description="its 95% interval")
    note: str | None = d(description="why there is no interval")


class PpiEstimate(Mean):
    """The PPI++ mean: people's scores corrected by the judge's on the unlabelled responses."""

    n_unlabelled: Count | None = d(description="responses the judge scored and no person did")
    interval: str | None = d(description="the interval's distribution (t)")


class CorrectedMean(Block):
    """One metric's judge-only, human-only and PPI++ means (`metrics.ppi.corrected_mean`)."""

    judge_only: Mean | None = d(description="over every response the judge scored")
    human_only: Mean | None = d(description="over the labelled responses, people's scores")
    ppi: PpiEstimate | None = d(description="the PPI++ estimate (labels drawn at random only)")
    left_out: Count | None = d(description="responses without a judge score")
    confidence_level: Score | None = d(description="the intervals' level")


class CorrectedMeans(Block):
    """A run's means corrected by people's labels (`meta.calibrate.corrected_means`)."""

    responses: Count | None = d(description="responses the run scored")
    labelled: Count | None = d(description="of them, labelled by people")
    assumes: str | None = d(description="what the estimates assume")
    sampling: Sampling | None = d(description="how the labelled responses were drawn")
    murgat_s: CorrectedMean | None = d(description="MURGAT-S")
    coverage: CorrectedMean | None = d(description="coverage")
    f1: CorrectedMean | None = d(description="F1")


class RunAgreement(Agreement):
    """One judge run against the labels: per subtask, and its confidence per yes/no stage."""

    calibration: dict[str, Calibration] = many(dict, "per yes/no stage: p_yes against labels")
    certification: dict[str, Certificate] = many(
        dict, "--certify: per stage, the run's own certificate on every labelled response"
    )
    ppi: CorrectedMeans | None = d(description="its means corrected by the labels")
    judges: dict[str, str] | None = d(
        description="stage -> its judge (summary.json's `models`; null: no summary)"
    )

    def judge_of(self, stage: str) -> str | None:
        """The run's judge of `stage` (None: not named)."""
        return (self.judges or {}).get(stage)


class InterAnnotator(Agreement):
    """The second label file against the first, with chance-corrected agreement."""

    precise: Binary | None = d(description="the citations' necessity, per citation")


class CascadeStep(Block):
    """One judge of a certified cascade."""

    judge: str | None = d(description="the judge")
    threshold: Score | None = d(description="its certified threshold (null: keeps nothing)")
    coverage: Score | None = d(description="share of what reaches it that it keeps")
    n: Count | None = d(description="items of its part reaching it")
    kept: Count | None = d(description="of them, kept")
    note: str | None = d(description="what it was certified on, or why not")


class Cascade(Block):
    """A cascade `murgat score --escalate-to` can ask, each judge certified on what reaches it."""

    stage: str | None = d(description="the stage")
    judges: list[str] = many(list, "its judges, in the order asked")
    target: Score | None = d(description="the agreement targeted")
    alpha: Score | None = d(description="the whole cascade's error level")
    min_kept: Count | None = d(description="the fewest verdicts a test starts at")
    seed: int | None = d(description="the seed of the split into parts")
    n: Count | None = d(description="labelled items every judge of it judged")
    steps: list[CascadeStep] = many(list, "per judge, its certificate")


class Candidate(Block):
    """A candidate judge of a stage (a run's judge, or a panel) and how it measured."""

    model: str | None = d(description="the judge, as `murgat score` takes it")
    members: list[str] = many(list, "its members (one: a single judge)")
    runs: list[str] = many(list, "per member, the run its verdicts were read from")
    vote: str | None = d(description="a panel's vote (null: a single judge)")
    weights: dict[str, NonNegative] | None = d(description="a weighted panel's weights")
    value: Score | None = d(description="its statistic on the stage's subtask")
    n: Count | None = d(description="what the statistic was computed over")
    murgat_s_pearson: Coefficient | None = d(
        description="its combination's MURGAT-S Pearson correlation (breaks ties)"
    )
    note: str | None = d(description="why it was kept though not measurable")


class StageChoice(Candidate):
    """The judge `--select` chose for a stage, and the candidates it was chosen among."""

    statistic: str | None = d(
        description="the statistic ranked by, e.g. subtask1.balanced_accuracy"
    )
    candidates: Count | None = d(description="candidates measured")
    ranking: list[Candidate] = many(list, "the ten best candidates, best first")
    singles: list[Candidate] = many(list, "the single judges among them, ranked")


class Combined(Block):
    """How the chosen combination's records were put together from the runs'."""

    responses: Count | None = d(description="responses combined")
    skipped: Count | None = d(description="responses that could not be combined")
    skipped_examples: dict[str, str] = many(dict, "up to five skipped: id -> why")
    facts: Count | None = d(description="facts in the combined records")
    facts_judged: Count | None = d(description="of them, with a joint entailment verdict")


class Combination(Agreement):
    """The chosen combination against the labels, with intervals."""

    combined: Combined | None = d(description="how its records were combined")


class Selection(Block):
    """`--select`: the judge chosen per stage, and the chosen combination as a whole."""

    stages: dict[str, StageChoice] = many(dict, "per stage: the judge chosen")
    combination: Combination | None = d(description="the chosen judges together")
    config: str | None = d(description="the configuration written (null: none)")
    chosen_on: SplitCounts | None = d(
        description="the part chosen on (null: every labelled response)"
    )
    error: str | None = d(description="why no choice could be made")

    def choice(self, stage: str) -> StageChoice | None:
        """The judge chosen for `stage` (None: none)."""
        return self.stages.get(stage)


__all__ = [
    "Agreement",
    "Calibration",
    "Cascade",
    "Certificate",
    "ChosenCertificate",
    "CorrectedMeans",
    "InterAnnotator",
    "RunAgreement",
    "Sampling",
    "Selection",
    "SplitCounts",
    "StageChoice",
]
