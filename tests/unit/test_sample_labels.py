"""samples/labels.jsonl, the bundled sample's labels written from how its media are built: it
reads cleanly, covers every sample response sentence by sentence, and scores as `human:`."""

from __future__ import annotations

import json
import pathlib

import pytest
from support.human_labels import _f1
from support.human_runs import _run

from murgat_local.text.labels import compare_sentences, read_labels
from murgat_local.text.segment import segment_response

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"


def _sample_responses() -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / "responses.jsonl").read_text().splitlines()]


def test_the_sample_labels_cover_every_sample_response_sentence_by_sentence():
    labels, errors = read_labels(SAMPLES / "labels.jsonl")
    assert errors == []
    responses = _sample_responses()
    assert sorted(labels) == sorted(r["id"] for r in responses) and len(responses) == 6
    for r in responses:
        split = segment_response(r["model_generation"])
        assert compare_sentences(labels[r["id"]], [s["text"] for s in split["sentences"]]) is None
        # Labelled in file order, all of them: no random asking order is claimed.
        assert labels[r["id"]].order_seed is None
        assert labels[r["id"]].annotator == "media-construction"


def test_the_sample_labels_score_as_the_human_judge(tmp_path, media_root):
    labels = [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines()]
    result, recs = _run(tmp_path, media_root, responses=_sample_responses(), labels=labels)
    assert result.exit_code == 0
    assert result.summary.judge_calls.failed == 0
    assert {rid: r["status"] for rid, r in recs.items()} == dict.fromkeys(recs, "ok")
    # Every fact of late-audio is true of its cited segment, each citation needed.
    assert recs["late-audio"]["murgat_s"] == pytest.approx(1.0)
    # colors-uncited cites one of its three verifiable sentences, and that one is all true.
    assert recs["colors-uncited"]["murgat_s"] == pytest.approx(1 / 3)
    # colors-correct: 4 of 5 verifiable sentences cited; 5 of 7 facts entailed, one of them
    # with only its visual citation of two needed.
    assert recs["colors-correct"]["murgat_s"] == pytest.approx(0.8 * _f1(4.5 / 7, 5 / 7))
