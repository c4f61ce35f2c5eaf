"""QA accuracy, the reasoning tax, kappa and alpha: one definition each (`metrics/`), checked
against numbers computed by hand."""

from __future__ import annotations

import pytest

from murgat_local.grading import graded_correct
from murgat_local.metrics.accuracy import (
    QaTally,
    qa_accuracy,
    reasoning_tax,
    reasoning_taxes,
)


def test_an_unanswered_question_is_graded_and_counted_wrong():
    # gold, answered, the answer matches
    assert graded_correct(True, True, True) is True
    assert graded_correct(True, True, False) is False
    assert graded_correct(True, False, None) is False  # unanswered: wrong, not left out
    assert graded_correct(False, True, True) is None  # no gold answer: not graded
    assert graded_correct(False, False, None) is None


def test_accuracy_is_correct_over_questions_with_a_gold_answer():
    # 5 questions with gold: 2 right, 1 wrong, 2 unanswered; 1 without gold (not graded)
    outcomes = [
        (True, True),
        (True, True),
        (False, True),
        (False, False),
        (False, False),
        (None, True),
    ]
    assert qa_accuracy(outcomes) == {
        "accuracy": 0.4,
        "graded": 5,
        "correct": 2,
        "unanswered": 2,
        "unanswered_rate": 0.4,
    }
    assert qa_accuracy([]) == {
        "accuracy": None,
        "graded": 0,
        "correct": 0,
        "unanswered": 0,
        "unanswered_rate": None,
    }
    every = qa_accuracy([(False, False)] * 3)
    assert (
        every["accuracy"] == 0.0 and every["unanswered_rate"] == 1.0
    )  # nothing answered: 0, not None


def test_the_running_tally_is_the_same_as_the_function():
    tally = QaTally()
    for correct, answered in [(True, True), (False, False), (None, False), (True, True)]:
        tally.add(correct, answered)
    assert tally.result() == qa_accuracy(
        [(True, True), (False, False), (None, False), (True, True)]
    )
    assert tally.result()["accuracy"] == pytest.approx(2 / 3) and tally.result()[
        "unanswered_rate"
    ] == pytest.approx(1 / 3)


def test_reasoning_tax_is_cite_minus_base():
    assert reasoning_tax(0.5, 0.25) == -0.25
    assert reasoning_tax(None, 0.25) is None and reasoning_tax(0.5, None) is None
    found = reasoning_taxes(
        [
            ("m1", "base", 0.5),
            ("m1", "cite", 0.75),
            ("m1", "posthoc", 0.1),
            ("m2", "cite", 0.5),
            (("m3", "ws"), "base", None),
            (("m3", "ws"), "cite", 0.2),
        ]
    )
    assert found == {
        "m1": {"base": 0.5, "cite": 0.75, "tax": 0.25},  # m2 has no base: no tax
        ("m3", "ws"): {"base": None, "cite": 0.2, "tax": None},
    }
    assert list(found) == ["m1", ("m3", "ws")]  # in the order first seen


def test_score_grades_the_answer_generate_read_and_counts_none_wrong():
    from types import SimpleNamespace

    from murgat_local.pipeline.records import answer_check

    def item(record, generation, answer):
        return SimpleNamespace(record=record, generation=generation, answer=answer)

    # generate's answer judge mapped a free answer to C: the scorer grades C, not the bare text
    assert answer_check(
        item({"answer_path": "judge", "predicted": "C"}, "The third one.", "C"), None, 0.01
    ) == ("C", "C", True)
    assert answer_check(
        item({"answer_path": None, "predicted": None}, "Hmm.", "c"), None, 0.01
    ) == (None, "C", False)
    # a row from elsewhere: the letter read from its text
    assert answer_check(item({}, "Answer: B", "C"), "B", 0.01) == ("B", "C", False)
    assert answer_check(item({}, "", None), None, 0.01) == (None, None, None)
    assert answer_check(item({"question_type": "open"}, "no short answer", "12"), None, 0.01) == (
        None,
        "12",
        False,
    )
    assert answer_check(
        item({"question_type": "open", "answer_path": "open", "predicted": "12.0"}, "x", "12"),
        None,
        0.01,
    ) == ("12.0", "12", True)
    # a `predicted` that is not text is not an answer generate read: the text is read instead
    assert answer_check(
        item({"answer_path": "judge", "predicted": ["C"]}, "Answer: A", "A"), "A", 0.01
    ) == ("A", "A", True)
