"""Partial data is never scored as if it were known: unscored sentences are marked and counted."""

from __future__ import annotations

import json

import pytest
from support.fakes import OracleEngine

from murgat_local.config import RunConfig
from murgat_local.grading import FactScore, SentenceScore, score_response
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.metrics.scores import summarize
from murgat_local.pipeline.runner import Runner
from murgat_local.results import ScoreRecord


def test_an_unparsed_decomposition_leaves_its_sentence_unscored_not_zero():
    ok = FactScore(1.0, 1.0, (True,))
    r = score_response(
        [
            SentenceScore(True, True, (ok,)),
            SentenceScore(True, True, (), unscored="decomposition unparsed"),
            SentenceScore(False, False),
        ]
    )
    assert r.counts["unscored_sentences"] == 1
    assert r.scored_fraction == pytest.approx(2 / 3)
    assert (r.coverage, r.precision, r.recall) == (1.0, 1.0, 1.0)
    # Every cited sentence unscored: attribution unknown, not 0.
    r = score_response([SentenceScore(True, True, (), unscored="decomposition unparsed")])
    assert r.murgat_s is None and r.note and r.scored_fraction == 0.0


def test_an_unjudged_sentence_is_counted_as_unscored():
    r = score_response(
        [SentenceScore(True, True, (FactScore(1.0, 1.0, (True,)),)), SentenceScore(None, True)]
    )
    assert r.counts["unscored_sentences"] == 1 and r.scored_fraction == 0.5
    full = score_response([SentenceScore(True, True, (FactScore(1.0, 1.0, (True,)),))])
    assert full.scored_fraction == 1.0


def test_summary_counts_partial_responses():
    recs = [
        {
            "status": "ok",
            "murgat_s": 1.0,
            "coverage": 1.0,
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "scored_fraction": 1.0,
        },
        {
            "status": "ok",
            "murgat_s": 0.0,
            "coverage": 1.0,
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
            "scored_fraction": 0.5,
        },
    ]
    s = summarize(map(ScoreRecord.model_validate, recs))
    assert s["partial"] == 1 and s["murgat_s"] == 0.5
    assert s["complete_only"]["murgat_s"] == 1.0 and s["complete_only"]["responses"] == 1


class BrokenDecomposer(OracleEngine):
    """The oracle, except that its decompositions are cut off (as at a token limit)."""

    def _answer(self, req):
        if req.verdict.__name__ == "AtomicFacts":
            return '{"facts":["The screen is'
        return super()._answer(req)


class BrokenVerifier(OracleEngine):
    def _answer(self, req):
        if (
            req.verdict.__name__ == "YesNo"
            and "<<<SENTENCE" in req.prompt
            and "green" in req.prompt
        ):
            return '{"label":"YE'
        return super()._answer(req)


def _run(tmp_path, media_root, engine, text):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps({"id": "a", "video": "colors", "model_generation": text}) + "\n")
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        media_root,
        tmp_path / "out",
        engines={"oracle": engine},
        summary=RunSummary,
    )
    try:
        result = runner.run(p)
    finally:
        runner.close()
    return result, json.loads(result.records_path.read_text())


def test_protocol_marks_an_unparsed_decomposition(tmp_path, media_root):
    result, rec = _run(
        tmp_path, media_root, BrokenDecomposer(), "The screen is red (visual, 0:00)."
    )
    sent = rec["trace"]["sentences"][0]
    assert sent.get("facts", []) == [] and "decomposition" in sent["unscored"]
    assert rec["murgat_s"] is None and rec["scored_fraction"] == 0.0
    assert result.summary.partial == 1


def test_protocol_marks_an_unparsed_verifiability_verdict(tmp_path, media_root):
    result, rec = _run(
        tmp_path,
        media_root,
        BrokenVerifier(),
        "The screen is red (visual, 0:00). The screen is green (visual, 0:01).",
    )
    first, second = rec["trace"]["sentences"]
    assert first.get("unscored") is None and "verifiab" in second["unscored"]
    assert rec["scored_fraction"] == 0.5 and rec["counts"]["unscored_sentences"] == 1
    assert rec["murgat_s"] == 1.0  # from what is known, and flagged by scored_fraction
    assert result.summary.partial == 1
