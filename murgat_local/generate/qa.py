"""QA accuracy: the answer letter of a response, and how it was found.

In order: the last `\\boxed{}`, an `Answer:` line (both in `text.answers`), and, only when
neither names a letter, a judge that maps the response to one option by a constrained choice
over the option letters (or NONE). A response with no recoverable answer is *unanswered*:
graded, counted wrong and listed (`metrics.accuracy`, the one rule of QA accuracy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..grading import graded_correct
from ..inputs.datasets import render_options
from ..judges import PromptTemplate
from ..judges.calls import Call
from ..text.answers import extract_answer
from ..text.open_answers import matches, open_answer
from .strategies import option_letters

NONE = "NONE"


@dataclass(frozen=True)
class Answer:
    letter: str | None
    path: str | None  # boxed | answer_line | judge | None (unanswered)
    reason: str | None = None  # why there is no letter

    def as_dict(self) -> dict:
        return {"predicted": self.letter, "path": self.path, "unanswered": self.reason}


def read_answer(text: str, options: Sequence[str] | None) -> Answer | None:
    """The letter the text states itself, or None when a judge must be asked (or cannot be)."""
    found = extract_answer(text, options)
    if found.letter is not None:
        return Answer(found.letter, found.path)
    if not options:
        return Answer(None, None, "no letter in the response, and no options to map it to")
    return None


def judge_call(template: PromptTemplate, question: str, options: Sequence[str], text: str) -> Call:
    user = template.render(question=question, options=render_options(options), response=text)
    return Call(template, user, choices=option_letters(options) + (NONE,))


def judged(outcome, options: Sequence[str]) -> Answer:
    if not outcome.ok:
        return Answer(
            None, None, f"the answer judge gave no choice ({outcome.error or outcome.unparsed})"
        )
    choice = outcome.text.strip()
    if choice == NONE:
        return Answer(None, None, "the answer judge found no option the response commits to")
    return Answer(choice, "judge")


def grade(row: dict, answer: Answer, judge: str | None = None) -> None:
    """Write a multiple-choice answer and its check into a response row."""
    row["predicted"] = answer.letter
    row["answer_path"] = answer.path
    row["unanswered"] = answer.reason
    if judge is not None and answer.path == "judge":
        row["answer_judge"] = judge
    gold = row.get("answer")
    row["gold"] = gold
    row["correct"] = graded_correct(bool(gold), answer.letter is not None, answer.letter == gold)


def grade_open(row: dict, tolerance: float) -> None:
    """Write an open question's short answer and its check (text or number match) into a row."""
    said = open_answer(row["model_generation"])
    row["predicted"] = said
    row["answer_path"] = "open" if said is not None else None
    row["unanswered"] = (
        None if said is not None else "no short answer (no \\boxed{} and no Answer: line)"
    )
    gold = row["gold"] = row.get("answer")
    row["correct"] = graded_correct(
        bool(str(gold or "").strip()), said is not None, matches(said, gold, tolerance)
    )
