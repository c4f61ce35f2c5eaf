"""A generated row the schema refuses is that answer's error, naming the key; the run goes on."""

from __future__ import annotations

from murgat_local.pipeline.generating import _recorded


def test_a_row_the_schema_refuses_is_kept_as_its_error():
    row = {
        "id": "q1",
        "model": "m/base",
        "strategy": "base",
        "sample": 0,
        "status": "ok",
        "model_generation": "Answer: A",
        "media": {"visual": {"fps": "fast"}},
    }
    rec = _recorded(row)
    assert rec.status == "error" and rec.id == "q1" and rec.model == "m/base"
    assert "could not be recorded" in (rec.error or "") and "media.visual.fps" in (rec.error or "")
    assert rec.model_generation is None  # nothing of the refused row passes for an answer


def test_even_the_names_of_a_refused_row_may_be_unfit():
    rec = _recorded({"id": 1.5, "sample": -2, "correct": "yes"})
    assert rec.status == "error" and rec.id is None and "correct" in (rec.error or "")


def test_a_row_it_accepts_is_read_as_written():
    row = {"id": "q2", "status": "ok", "model_generation": "A", "extra_field": [1, 2]}
    assert _recorded(row).dump() == {**row, "schema_version": 1}
