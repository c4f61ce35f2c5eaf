"""Reading human labels: whitespace differences are no mismatch, and every bad line is reported with its reason."""

from __future__ import annotations

import json

from support.human_labels import _write

from murgat_local.judges.human import HumanLabels
from murgat_local.text.labels import compare_sentences, read_labels


def test_whitespace_differences_are_not_a_mismatch_and_counts_are_named(tmp_path):
    lab = _write(
        tmp_path / "l.jsonl",
        [{"id": "a", "sentences": [{"text": "A  red\nsquare.", "verifiable": False}]}],
    )
    labels, errors = read_labels(lab)
    assert not errors
    assert compare_sentences(labels["a"], ["A red square."]) is None
    assert (
        compare_sentences(labels["a"], ["A red square.", "More."])
        == "sentence 2 is missing from the labels: 'More.' (the response has 2 sentences, the labels 1)"
    )
    assert compare_sentences(labels["a"], []).startswith(
        "the labels have a sentence 1 the response does not"
    )


def test_the_label_reader_reports_bad_lines(tmp_path):
    good = {"id": "ok", "sentences": [{"text": "A.", "verifiable": False}]}
    lines = [
        "{not json",
        json.dumps([1]),
        json.dumps({"sentences": []}),
        json.dumps({"id": {"a": 1}, "sentences": []}),
        json.dumps(good),
        json.dumps(good),
        json.dumps({"id": "s", "sentences": "A."}),
        json.dumps({"id": "v", "sentences": [{"text": "A.", "verifiable": "yes"}]}),
        json.dumps(
            {
                "id": "f",
                "sentences": [
                    {
                        "text": "So B.",
                        "verifiable": False,
                        "facts": [{"text": "B.", "entailed": True, "precise": []}],
                    }
                ],
            }
        ),
        json.dumps(
            {
                "id": "n",
                "sentences": [
                    {
                        "text": "Red (visual, 0:00; audio, 0:00).",
                        "verifiable": True,
                        "facts": [{"text": "Red.", "entailed": True, "precise": [True]}],
                    }
                ],
            }
        ),
        json.dumps(
            {
                "id": "p",
                "sentences": [
                    {
                        "text": "Red (visual, 0:00).",
                        "verifiable": True,
                        "facts": [{"text": "Red.", "entailed": True}],
                    }
                ],
            }
        ),
        json.dumps(
            {
                "id": "u",
                "sentences": [
                    {
                        "text": "Red.",
                        "verifiable": True,
                        "facts": [{"text": "Red.", "entailed": False}],
                    }
                ],
            }
        ),
        json.dumps({"id": 7, "sentences": []}),
        "",
    ]
    path = tmp_path / "l.jsonl"
    path.write_text("\n".join(lines) + "\n")
    labels, errors = read_labels(path)
    assert sorted(labels) == ["7", "ok"]
    got = [(e.source, e.id, e.reason) for e in errors]
    assert got == [
        (
            "line 1",
            None,
            "malformed JSON on line 1: Expecting property name enclosed in double quotes (column 2)",
        ),
        ("line 2", None, "expected a JSON object, got list"),
        ("line 3", None, "missing field 'id'"),
        ("line 4", None, "field 'id' must be a string or an integer, not dict"),
        ("line 6", "ok", "duplicate id 'ok' (first occurrence kept)"),
        ("line 7", "s", "field 'sentences' must be a list, not str"),
        ("line 8", "v", "sentence 1: field 'verifiable' must be true or false, not str"),
        ("line 9", "f", "sentence 1: 'facts' given for a sentence labelled not verifiable"),
        (
            "line 10",
            "n",
            "sentence 1: fact 1: field 'precise' has 1 entries; the sentence has 2 citations",
        ),
        (
            "line 11",
            "p",
            "sentence 1: fact 1: field 'precise' is missing (one true/false per citation, required when entailed)",
        ),
        ("line 12", "u", "sentence 1: 'facts' given for a sentence without citations"),
    ]
    # A response whose labels are unusable is that response's error, with the line's reason.
    engine = HumanLabels(path)
    assert (
        engine.check_response("v", ["A."])
        == "the labels for this response are unusable (l.jsonl line 8: sentence 1: field 'verifiable' must be true or false, not str)"
    )
    assert engine.check_response("ok", ["A."]) is None
    assert len(engine.identity_detail["label_errors"]) == len(errors)
