"""Any record the printed schema accepts goes through `murgat rescore`, `compare`, `report` and
`meta-eval` without a traceback: records and summaries are drawn from the JSON Schemas `murgat
schema` prints (hypothesis), written as a run folder, and each command is run on it in-process.
A command may refuse a line (exit 1, naming it); it may not crash on one.

Whole records drawn from the schema are mostly shallow, so half the records are a real run's
records with one part (a sentence, a citation, a fact, a verdict, top-level fields) replaced by
one the schema's definition of that part accepts: every such record is one the schema accepts."""

from __future__ import annotations

import json
import pathlib
import shutil
import tempfile

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.human_labels import LABELS
from support.paths import ROOT
from support.schema_strategy import from_schema, part_of
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.results import SCHEMAS, layout

SAMPLE = ROOT / "tests" / "support" / "data" / "results_v0" / "score"
IDS = ("h01", "h02", "h03", "h04")  # the labelled responses' ids, so that some records align

_SCHEMA = SCHEMAS["score-record"].model_json_schema()
RECORD = from_schema(_SCHEMA)
SENTENCE, CITATION = part_of(_SCHEMA, "SentenceRecord"), part_of(_SCHEMA, "CitationRecord")
FACT, VERDICT = part_of(_SCHEMA, "FactRecord"), part_of(_SCHEMA, "Verdict")
SUMMARY = from_schema(SCHEMAS["summary"].model_json_schema())
META = from_schema(SCHEMAS["meta-eval"].model_json_schema())
GENERATED = from_schema(SCHEMAS["generation-record"].model_json_schema())
RUN_SUMMARY = from_schema(SCHEMAS["run-summary"].model_json_schema())
REAL = [json.loads(line) for line in (SAMPLE / layout.SCORES).read_text().splitlines()]


@st.composite
def changed(draw) -> dict:
    """A real record with one part replaced by one the schema accepts."""
    rec = json.loads(json.dumps(draw(st.sampled_from(REAL))))
    sentences = rec["trace"]["sentences"]
    i = draw(st.integers(0, len(sentences) - 1))
    facts = sentences[i].get("facts") or []
    what = draw(st.sampled_from(["top", "sentence", "citation", "fact", "verdict"]))
    if what == "top":
        rec.update(draw(RECORD))
    elif what == "sentence":
        sentences[i] = draw(SENTENCE)
    elif what == "citation":
        sentences[i]["citations"] = draw(st.lists(CITATION, min_size=1, max_size=2))
    elif what == "fact" or not facts:
        sentences[i]["facts"] = [*facts, draw(FACT)]
    else:
        slot = draw(st.sampled_from(["joint", "alone", "without", "verifiable"]))
        verdict = draw(VERDICT)
        if slot == "verifiable":
            sentences[i]["verifiable"] = verdict
        elif slot == "joint":
            facts[0]["joint"] = verdict
        else:
            facts[0][slot] = {draw(st.sampled_from(["0", "1", "7"])): verdict}
    return rec


@st.composite
def runs(draw) -> tuple[list[dict], dict]:
    records = draw(st.lists(RECORD | changed(), min_size=1, max_size=4))
    for r in records:  # most records answer a labelled response
        if draw(st.booleans()):
            r["id"] = draw(st.sampled_from(IDS))
    return records, draw(SUMMARY)


def _check(args: list[str]) -> None:
    got = CliRunner().invoke(app, args)
    # an exit status (0, 1 naming what was refused, 2 a usage error), never an exception
    assert got.exception is None or isinstance(got.exception, SystemExit), (
        args,
        got.output[-2000:],
        got.exception,
    )
    assert got.exit_code in (0, 1, 2), got.output[-2000:]


# Each example runs seven commands (about 2 s); shrinking a failure would take many minutes, so a
# failure is reported as drawn (hypothesis prints it, and its seed reproduces it).
@settings(
    max_examples=20,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    run=runs(),
    meta=META,
    grid=st.tuples(RUN_SUMMARY, st.lists(GENERATED, max_size=3)),
)
def test_records_the_schema_accepts_crash_no_command(run, meta, grid):
    records, summary = run
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="murgat-schema-"))
    try:
        folder = tmp / "run"
        folder.mkdir()
        text = "".join(json.dumps(r) + "\n" for r in records)
        (folder / layout.SCORES).write_text(text, encoding="utf-8")
        (folder / layout.SUMMARY).write_text(json.dumps(summary), encoding="utf-8")
        labels = tmp / "labels.jsonl"
        labels.write_text("".join(json.dumps(r) + "\n" for r in LABELS), encoding="utf-8")
        (tmp / "meta").mkdir()
        (tmp / "meta" / layout.META_EVAL).write_text(json.dumps(meta), encoding="utf-8")
        # a `murgat run` folder: its run_summary.json and one cell, the same records in it
        cell = tmp / "grid" / layout.cell_folder("m", "cite")
        cell.mkdir(parents=True)
        (tmp / "grid" / layout.RUN_SUMMARY).write_text(json.dumps(grid[0]), encoding="utf-8")
        for name in (layout.SCORES, layout.SUMMARY):
            shutil.copy(folder / name, cell / name)
        generated = "".join(json.dumps(r) + "\n" for r in grid[1])
        (cell / layout.RESPONSES).write_text(generated, encoding="utf-8")
        scores = str(folder / layout.SCORES)
        _check(["rescore", scores, "--resamples", "0", "--out", str(tmp / "re.jsonl")])
        _check(
            ["rescore", scores, "--resamples", "3", "--group-by", "model", "--compat", "reference"]
        )
        _check(["compare", str(SAMPLE), str(folder), "--resamples", "3"])
        _check(["compare", str(folder), str(folder), "--resamples", "3", "--group-by", "x"])
        _check(["report", str(folder), str(tmp / "grid"), "--out", str(tmp / "r.html")])
        _check(
            ["report", str(folder), "--out", str(tmp / "m.html"), "--meta-eval", str(tmp / "meta")]
        )
        _check(
            [
                "meta-eval",
                str(folder),
                "--human",
                str(labels),
                "--out",
                str(tmp / "out"),
                "--resamples",
                "3",
            ]
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
