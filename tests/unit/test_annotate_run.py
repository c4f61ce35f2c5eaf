"""`murgat annotate RUN`: the judges' proposals read from a `murgat score` folder's records, the
questions `--abstained` asks, and a records line the reader refuses named on the response."""

from __future__ import annotations

import hashlib
import json

import pytest

from murgat_local.annotate.source import abstained_questions, load_source
from murgat_local.results import ScoreRecord
from murgat_local.text.segment import segment

ROWS = [
    {
        "id": "two",
        "video": "colors",
        "model_generation": "The screen is red (visual, 0:00; audio, 0:00-0:01). A tone plays.",
    },
    {"id": "three", "video": "colors", "model_generation": "It is green (visual, 0:01)."},
    {"id": "four", "video": "colors", "model_generation": "It is blue (visual, 0:02)."},
]
SURE = {"value": True, "p_yes": 0.9}
UNSURE = {"value": False, "abstained": True, "decided_by": None}


def _sentences(rid: str) -> list[str]:
    row = next(r for r in ROWS if r["id"] == rid)
    return [s.text for s in segment(row["model_generation"]).sentences]


def _two() -> dict:
    first, second = _sentences("two")
    return {
        "index": 0,
        "id": "two",
        "status": "ok",
        "mode": "default",
        "trace": {
            "sentences": [
                {
                    "text": first,
                    "verifiable": SURE,
                    "facts": [
                        {
                            "text": "The screen is red.",
                            "joint": SURE,
                            "precise": [True, None],
                            "alone": {"0": SURE, "1": UNSURE},
                            "without": {"0": None, "1": SURE},
                        },
                        {"text": "It is bright.", "joint": UNSURE},
                    ],
                },
                {"text": second, "verifiable": UNSURE},  # not decomposed: no `facts`
            ]
        },
    }


def _four() -> dict:
    (only,) = _sentences("four")
    return {
        "index": 2,
        "id": "four",
        "status": "ok",
        "mode": "default",
        "trace": {"sentences": [{"text": only, "verifiable": UNSURE}]},
    }


@pytest.fixture()
def run(tmp_path):
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    folder = tmp_path / "run"
    folder.mkdir()
    digest = hashlib.sha256(responses.read_bytes()).hexdigest()
    summary = {"provenance": {"input": {"path": str(responses), "sha256": digest}}}
    (folder / "summary.json").write_text(json.dumps(summary))
    # "three"'s line holds a key no score record has: the reader refuses that line.
    three = {"index": 1, "id": "three", "mode": "default", "scores": 1}
    lines = [ScoreRecord.model_validate(_two()).dump(), three, _four()]
    (folder / "scores.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_the_judges_proposals_and_a_refused_line_named_on_its_response(run, media_root):
    src = load_source(run, media_root)
    two, three, four = src.items
    first, second = (s.proposal for s in two.sentences)
    assert first is not None and second is not None
    assert (first.verifiable, first.facts) == (True, ("The screen is red.", "It is bright."))
    assert first.entailed == (True, False) and first.precise == ((True, None), ())
    # an abstained verdict proposes its value; a sentence never decomposed proposes no facts
    assert (second.verifiable, second.facts) == (False, None)
    assert two.note is None and four.note is None
    assert all(s.proposal is None for s in three.sentences)
    assert three.note is not None and three.note.startswith(
        "the run has no readable record for this response (scores.jsonl line 2: "
    )
    assert "scores: unknown field" in three.note
    assert [str(e).split(": ")[0] for e in src.unreadable] == [f"{run / 'scores.jsonl'} line 2"]
    assert sorted(src.judge) == ["four", "two"]


def test_abstained_asks_the_abstained_verdicts_and_says_the_unreadable(run, media_root):
    record = ScoreRecord.model_validate(_two())
    assert abstained_questions(record) == (
        "s1.f1.c2.precise",
        "s1.f2.entailed",
        "s2.verifiable",
    )
    assert abstained_questions(ScoreRecord.model_validate({"id": "x"})) == ()
    src = load_source(run, media_root, abstained=True)
    assert [(it.id, it.ask) for it in src.items] == [
        ("two", ("s1.f1.c2.precise", "s1.f2.entailed", "s2.verifiable")),
        ("four", ("s1.verifiable",)),
    ]
    # "three" may have had abstentions: its line's error is said, and it is not asked
    assert [(u.id, u.source) for u in src.unusable] == [("three", "line 2")]
    assert "scores: unknown field" in src.unusable[0].reason


def test_a_run_without_a_response_s_record_and_no_refused_line(run, media_root):
    scores = run / "scores.jsonl"
    scores.write_text("".join(line + "\n" for line in scores.read_text().splitlines()[:1]))
    src = load_source(run, media_root)
    assert [it.note for it in src.items] == [
        None,
        "the run has no record for this response",
        "the run has no record for this response",
    ]
    assert src.unreadable == []
    # --abstained: a response the run has no record of has nothing to ask
    assert [it.id for it in load_source(run, media_root, abstained=True).items] == ["two"]
