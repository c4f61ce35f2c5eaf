"""QA accuracy and the reasoning tax: the one definition of each. Pure: no I/O.

QA accuracy = correct answers / questions with a gold answer. A question with a gold answer
whose response states no answer (*unanswered*) is graded and counted wrong, as lmms-eval and
VLMEvalKit count it; how many were unanswered, and their share of the graded questions, stand
beside the accuracy, so that answers the reader could not find are seen apart from wrong ones.
A question without a gold answer is not graded.

The reasoning tax of a model is its QA accuracy when it must cite (`cite`) minus its accuracy
when it need not (`base`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from ..results import GenerationRecord

K = TypeVar("K", bound=Hashable)

WITHOUT, WITH = "base", "cite"  # the strategies the reasoning tax compares


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


class QaTally:
    """QA accuracy, one question at a time, in constant memory (what `qa_accuracy` returns)."""

    __slots__ = ("graded", "correct", "unanswered")

    def __init__(self):
        self.graded = 0
        self.correct = 0
        self.unanswered = 0

    def add(self, correct: bool | None, answered: bool) -> None:
        """`correct`: the question's `graded_correct` outcome (None: not graded)."""
        if correct is None:
            return
        self.graded += 1
        self.correct += bool(correct)
        self.unanswered += not answered

    def result(self) -> dict:
        return {
            "accuracy": _ratio(self.correct, self.graded),
            "graded": self.graded,
            "correct": self.correct,
            "unanswered": self.unanswered,
            "unanswered_rate": _ratio(self.unanswered, self.graded),
        }


def qa_accuracy(outcomes: Iterable[tuple[bool | None, bool]]) -> dict:
    """{"accuracy", "graded", "correct", "unanswered", "unanswered_rate"} of (correct, answered)
    per question; accuracy and rate are None when nothing was graded."""
    tally = QaTally()
    for correct, answered in outcomes:
        tally.add(correct, answered)
    return tally.result()


def reasoning_tax(base: float | None, cite: float | None) -> float | None:
    """Accuracy under `cite` minus under `base` (None when either is unknown)."""
    return None if base is None or cite is None else cite - base


def reasoning_taxes(
    accuracies: Iterable[tuple[K, str, float | None]],
) -> dict[K, dict]:
    """Per key (a model, or a model and a benchmark) with both a `base` and a `cite` accuracy:
    {"base", "cite", "tax"}, in the order the keys first appear.

    Args:
        accuracies: (key, strategy, QA accuracy) per cell.
    """
    by: dict[K, dict[str, float | None]] = {}
    for key, strategy, acc in accuracies:
        by.setdefault(key, {})[strategy] = acc
    return {
        key: {"base": a[WITHOUT], "cite": a[WITH], "tax": reasoning_tax(a[WITHOUT], a[WITH])}
        for key, a in by.items()
        if WITHOUT in a and WITH in a
    }


def cell_accuracy(rows: Sequence[GenerationRecord]) -> dict:
    """QA accuracy of a `murgat generate` cell's rows (`qa_accuracy` over each row's
    `correct`; rows that erred are not graded), with the unanswered ones listed, how each answer
    was read (`answer_paths`) and how many of each kind were graded (`graded_by_type`)."""
    graded = [r for r in rows if r.correct is not None and r.status == "ok"]
    answered = [r for r in graded if r.predicted is not None]
    return {
        **qa_accuracy((r.correct, r.predicted is not None) for r in graded),
        "graded_by_type": dict(Counter(r.question_type or "multiple-choice" for r in graded)),
        "answered": len(answered),
        "unanswered_ids": [r.id for r in graded if r.predicted is None],
        "answer_paths": dict(Counter(r.answer_path for r in answered)),
    }


def taxes_by_model(accuracies: Iterable[tuple[str, str, float | None]]) -> dict[str, float | None]:
    """The reasoning tax per model (`reasoning_taxes`) as `summary.json` and
    `run_summary.json` give it: {model: cite - base}, from (model, strategy, accuracy) per cell."""
    return {model: t["tax"] for model, t in reasoning_taxes(accuracies).items()}
