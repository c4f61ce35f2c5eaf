import pytest

from murgat_local.grading import (
    FactScore,
    SentenceScore,
    f1,
    score_fact_default,
    score_fact_reference,
    score_response,
)
from murgat_local.metrics.scores import summarize
from murgat_local.results import ScoreRecord


def test_default_single_citation():
    assert score_fact_default([True], True, {}, {}) == FactScore(1.0, 1.0, (True,))
    assert score_fact_default([True], False, {}, {}) == FactScore(0.0, 0.0, (False,))


def test_default_strict_necessity():
    # c0 entails alone; c1 does not, and c0 still entails without it -> c1 is imprecise.
    s = score_fact_default([True, True], True, {0: True, 1: False}, {1: True})
    assert (s.precision, s.recall, s.precise) == (0.5, 1.0, (True, False))
    # Neither entails alone, each is needed (removing either breaks the joint entailment).
    s = score_fact_default([True, True], True, {0: False, 1: False}, {0: False, 1: False})
    assert (s.precision, s.recall) == (1.0, 1.0)


def test_default_unusable_citation_is_unsupported():
    # An out-of-range citation never counts as precise; the other carries the joint verdict.
    s = score_fact_default([True, False], True, {}, {})
    assert (s.precision, s.recall, s.precise) == (0.5, 1.0, (True, False))
    assert score_fact_default([False], None, {}, {}) == FactScore(0.0, 0.0, (False,))


def test_default_missing_verdict_is_not_a_no():
    s = score_fact_default([True, True], True, {0: None, 1: True}, {})
    assert not s.scored and "unparsed" in s.reason


def test_reference_fact_scores():
    # precision = share of citations that entail alone; recall = joint with 2+ citations
    s = score_fact_reference([True, True, True], [True] * 3, {0: True, 1: False, 2: True}, False)
    assert (s.precision, s.recall) == (pytest.approx(2 / 3), 0.0)
    # one citation: recall equals precision
    assert score_fact_reference([True], [True], {0: True}, None).recall == 1.0
    # an unparseable timestamp counts as NO
    s = score_fact_reference([False, True], [True, True], {1: True}, True)
    assert (s.precision, s.recall) == (0.5, 1.0)
    # a segment that could not be extracted drops the fact from the pools
    assert not score_fact_reference([True, True], [True, False], {0: True}, True).scored


def test_response_score_hand_computed():
    facts_a = (FactScore(1.0, 1.0), FactScore(0.5, 1.0))
    facts_b = (FactScore(0.0, 0.0),)
    sentences = [
        SentenceScore(True, True, facts_a),
        SentenceScore(True, True, facts_b),
        SentenceScore(True, False),  # verifiable, uncited
        SentenceScore(False, False),  # reasoning
        SentenceScore(None, True),  # unjudged: not counted either way
    ]
    r = score_response(sentences)
    assert r.coverage == pytest.approx(2 / 3)
    assert r.precision == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert r.recall == pytest.approx(2 / 3)
    assert r.f1 == pytest.approx(f1(0.5, 2 / 3))
    assert r.murgat_s == pytest.approx(2 / 3 * f1(0.5, 2 / 3))
    assert r.counts["unjudged_sentences"] == 1


def test_undefined_is_not_zero():
    r = score_response([SentenceScore(False, False)])
    assert r.murgat_s is None and r.note == "no verifiable sentence"
    assert score_response([SentenceScore(False, False)], reference=True).murgat_s == 0.0
    r = score_response([SentenceScore(True, True, (FactScore(None, None, (), "x"),))])
    assert r.coverage == 1.0 and r.precision is None


def test_summary_means_per_response_values():
    recs = [
        {
            "status": "ok",
            "coverage": 1.0,
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "murgat_s": 1.0,
            "correct": True,
        },
        {
            "status": "ok",
            "coverage": 0.5,
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
            "murgat_s": 0.0,
            "correct": False,
        },
        {
            "status": "ok",
            "coverage": None,
            "precision": None,
            "recall": None,
            "f1": None,
            "murgat_s": None,
        },
        {"status": "error"},
    ]
    s = summarize(map(ScoreRecord.model_validate, recs))
    assert (s["responses"], s["scored"], s["errors"], s["undefined"]) == (4, 3, 1, 1)
    assert s["murgat_s"] == 0.5 and s["coverage"] == 0.75 and s["qa_accuracy"] == 0.5
    assert (s["unanswered"], s["unanswered_rate"]) == (0, 0.0)


def test_summary_counts_unanswered_questions_wrong_and_beside_the_accuracy():
    def rec(correct, predicted, **kw):
        return {
            "status": "ok",
            "murgat_s": None,
            "correct": correct,
            "answer": {"predicted": predicted, "gold": "A"},
            **kw,
        }

    # 4 graded: right, wrong, unanswered (wrong), unanswered open question; 1 without gold
    recs = [
        rec(True, "A"),
        rec(False, "B"),
        rec(False, None),
        rec(False, None, question_type="open"),
        {
            "status": "ok",
            "murgat_s": None,
            "correct": None,
            "answer": {"predicted": "A", "gold": None},
        },
    ]
    s = summarize(map(ScoreRecord.model_validate, recs), group_by=["question_type"])
    assert (s["qa_accuracy"], s["unanswered"], s["unanswered_rate"]) == (0.25, 2, 0.5)
    assert s["qa_graded"] == {"multiple-choice": 3, "open": 1}
    open_ = s["by_group"]["question_type"]["open"]
    assert (open_["qa_accuracy"], open_["unanswered"], open_["unanswered_rate"]) == (0.0, 1, 1.0)
