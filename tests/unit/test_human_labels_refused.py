"""Human labels as a judge (`human:PATH`): what is refused, not guessed: sentences that differ from the
labels, labels no answer can honour, facts the grammar cannot write, a model's facts given to a
human entailer, citations that read the same but are labelled differently, and the usage errors
(reference mode, missing labels)."""

from __future__ import annotations

import pytest
from support.fakes import OracleEngine
from support.human_labels import LABELS, RESPONSES, _write
from support.human_runs import _run

from murgat_local.config import RunConfig
from murgat_local.judges.human import HumanLabels
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


def test_a_sentence_that_differs_from_the_labels_is_that_responses_error(tmp_path, media_root):
    labels = [
        dict(
            LABELS[1],
            sentences=[
                LABELS[1]["sentences"][0],
                {"text": "So the answer is D.", "verifiable": False},
            ],
        )
    ]
    responses = [RESPONSES[1], dict(RESPONSES[0], id="h09")]
    result, recs = _run(tmp_path, media_root, responses=responses, labels=labels + [LABELS[0]])
    assert recs["h02"]["status"] == "error"
    assert (
        recs["h02"]["error"]
        == "sentence 2 differs from the labels: 'So the answer is C.' vs 'So the answer is D.'"
    )
    # A response the labels do not hold is refused with the reason, before any call.
    assert recs["h09"]["status"] == "error" and "'h09' is not in the labels" in recs["h09"]["error"]
    assert result.exit_code == 1
    assert result.summary.judge_calls.total == 0


def test_labels_that_no_answer_can_honour_are_refused_not_guessed(tmp_path, media_root):
    responses = [
        {
            "id": "c",
            "video": "colors",
            "model_generation": "The screen is red (visual, 0:00; visual, 0:01).\nAnswer: A",
        },
        {
            "id": "m",
            "video": "colors",
            "model_generation": "The screen is green (visual, 0:01). So B.\nAnswer: B",
        },
    ]
    labels = [
        # Entailed with two citations and neither needed: contradictory.
        {
            "id": "c",
            "sentences": [
                {
                    "text": "The screen is red (visual, 0:00; visual, 0:01).",
                    "verifiable": True,
                    "facts": [
                        {"text": "The screen is red.", "entailed": True, "precise": [False, False]}
                    ],
                }
            ],
        },
        # Verifiable and cited but no human facts: the decomposition is refused.
        {
            "id": "m",
            "sentences": [
                {"text": "The screen is green (visual, 0:01).", "verifiable": True},
                {"text": "So B.", "verifiable": False},
            ],
        },
    ]
    result, recs = _run(
        tmp_path, media_root, responses=responses, labels=labels, max_failed_calls=1.0
    )
    fact = recs["c"]["trace"]["sentences"][0]["facts"][0]
    assert fact["precision"] is None and "none of its 2 citations is needed" in fact["unscored"]
    assert recs["c"]["murgat_s"] is None
    sent = recs["m"]["trace"]["sentences"][0]
    assert (
        "no human facts for the sentence 'The screen is green.' (no facts were given)"
        in sent["unscored"]
    )
    assert result.summary.judge_calls.failed > 0


def test_facts_the_decomposition_grammar_cannot_write_are_refused_with_the_reason(
    tmp_path, media_root
):
    # A model's decomposition is generated under a grammar whose strings hold no quote or
    # backslash; a hand-written fact with one is refused by name, not read as a parse failure.
    responses = [
        {
            "id": "q",
            "video": "colors",
            "model_generation": "The screen is red (visual, 0:00).\nAnswer: A",
        }
    ]
    labels = [
        {
            "id": "q",
            "sentences": [
                {
                    "text": "The screen is red (visual, 0:00).",
                    "verifiable": True,
                    "facts": [
                        {"text": 'The screen reads "red".', "entailed": True, "precise": [True]}
                    ],
                }
            ],
        }
    ]
    _, recs = _run(tmp_path, media_root, responses=responses, labels=labels, max_failed_calls=1.0)
    why = recs["q"]["trace"]["sentences"][0]["unscored"]
    assert (
        "cannot be written as the AtomicFacts verdict" in why
        and "grammar" not in why.split("verdict")[0]
    ), why


def test_a_human_entailer_refuses_a_models_facts(tmp_path, media_root):
    oracle = OracleEngine()
    lab = _write(tmp_path / "labels.jsonl", LABELS)
    result, recs = _run(
        tmp_path,
        media_root,
        responses=[RESPONSES[1]],
        engines={"oracle": oracle},
        judge="oracle",
        entailer=f"human:{lab}",
        decontextualize=False,
        max_failed_calls=1.0,
    )
    fact = recs["h02"]["trace"]["sentences"][0]["facts"][0]
    assert fact["text"] == "The screen is blue."  # the oracle's decomposition happens to agree
    assert fact["precision"] == 1.0

    class Wordy(OracleEngine):
        def _answer(self, req):
            if req.verdict.__name__ == "AtomicFacts":
                return '{"facts":["A blue screen is shown."]}'
            return super()._answer(req)

    (tmp_path / "b").mkdir()
    result, recs = _run(
        tmp_path / "b",
        media_root,
        responses=[RESPONSES[1]],
        engines={"oracle": Wordy()},
        judge="oracle",
        entailer=f"human:{lab}",
        decontextualize=False,
        max_failed_calls=1.0,
    )
    fact = recs["h02"]["trace"]["sentences"][0]["facts"][0]
    assert "is not a human fact of response 'h02'" in fact["unscored"]


def test_reference_mode_and_missing_labels_are_usage_errors(tmp_path, media_root):
    with pytest.raises(ValueError, match="default-mode"):
        Runner(
            RunConfig(judge=f"human:{_write(tmp_path / 'l.jsonl', LABELS)}", compat="reference"),
            media_root,
            tmp_path / "o",
            summary=RunSummary,
        )
    with pytest.raises(ValueError, match="do not exist"):
        HumanLabels(tmp_path / "none.jsonl")


def test_citations_that_read_the_same_but_are_labelled_differently_are_refused(
    tmp_path, media_root
):
    text = "The screen is red (visual, 0:00; visual, 0:00)."
    responses = [{"id": "d", "video": "colors", "model_generation": text + "\nAnswer: A"}]
    labels = [
        {
            "id": "d",
            "sentences": [
                {
                    "text": text,
                    "verifiable": True,
                    "facts": [
                        {"text": "The screen is red.", "entailed": True, "precise": [True, False]}
                    ],
                }
            ],
        }
    ]
    _, recs = _run(tmp_path, media_root, responses=responses, labels=labels, max_failed_calls=1.0)
    fact = recs["d"]["trace"]["sentences"][0]["facts"][0]
    assert fact["recall"] is None and "a judge cannot tell them apart" in fact["unscored"]
