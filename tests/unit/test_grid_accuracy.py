"""One QA accuracy per `murgat run` cell: a response that generate answered and the scorer could
not score (its row is over the scorer's size limit) is graded the same way in the generation's
summary, the cell's summary.json, run_summary.json and the tables. The whole grid runs, with a
scripted responder and the oracle judge (no model)."""

from __future__ import annotations

import csv
import functools
import json

from support.fakes import OracleEngine
from support.named_keys import assert_read_whole
from support.paths import ROOT
from support.scripted import Scripted

from murgat_local.config import RunConfig
from murgat_local.generate_config import GenerateConfig
from murgat_local.inputs.benchmarks import open_dataset
from murgat_local.jobs import grid as grid_module
from murgat_local.pipeline.generating import GenerateRunner
from murgat_local.reports.paper_table import points
from murgat_local.results import (
    GenerationSummary,
    RunSummary,
    Summary,
    layout,
    read_generation_summary,
    read_run_summary,
    read_score_records,
    read_summary,
)

LONG = "x" * 3000  # over the scorer's limit below, under the generator's


def test_a_response_that_fails_scoring_counts_the_same_in_every_output(
    tmp_path, media_root, monkeypatch
):
    rows = [json.loads(line) for line in (ROOT / "samples" / "questions.jsonl").open()]
    rows[1]["notes"] = LONG  # gold B, which the scripted responder answers: a right answer
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    engines = {"tiny-qwen3-omni": Scripted("tiny-qwen3-omni"), "oracle": OracleEngine()}
    monkeypatch.setattr(
        grid_module, "GenerateRunner", functools.partial(GenerateRunner, engines=engines)
    )
    out = tmp_path / "run"
    grid = grid_module.Grid(
        GenerateConfig(models=["tiny-qwen3-omni"], strategies=["base", "cite"]),
        RunConfig(
            judge="oracle",
            decontextualize=False,
            inputs={"max_text_chars": 2000},
            group_by=["benchmark"],  # as `murgat run` always groups
        ),
        media_root,
        out,
    )
    result = grid.run(open_dataset(dataset))

    run = read_run_summary(out / layout.RUN_SUMMARY)
    generation = read_generation_summary(out / layout.GENERATION_SUMMARY)
    assert isinstance(run, RunSummary) and isinstance(generation, GenerationSummary)
    # every key of the grid's summaries is named, and each writes back as read
    assert_read_whole(out / layout.RUN_SUMMARY, RunSummary)
    assert_read_whole(out / layout.GENERATION_SUMMARY, GenerationSummary)
    assert run.generation == str(out / layout.GENERATION_SUMMARY)
    assert not (out / layout.SUMMARY).exists()  # the generation's summary has its own name
    sheet = {r["strategy"]: r for r in csv.DictReader((out / layout.TABLES_CSV).open())}
    assert len(sheet) == 2 and "benchmark" not in next(iter(sheet.values()))  # one benchmark
    assert not any("QA accuracy" in w for w in result.summary.warnings)
    for label, row in (run.grid or {}).items():
        folder = out / layout.cell_folder(row.model or "", row.strategy or "")
        records = list(read_score_records(folder / layout.SCORES))
        failed = [r for r in records if getattr(r, "status", None) == "error"]
        assert len(failed) == 1 and "over the limit" in (failed[0].error or ""), label
        assert failed[0].correct is True and failed[0].answer is not None  # graded all the same
        assert failed[0].benchmark == "questions"  # in its group, as generate labelled it
        cell = read_summary(folder / layout.SUMMARY)
        assert isinstance(cell, Summary) and cell.errors == 1
        assert_read_whole(folder / layout.SUMMARY, Summary)
        gen = (generation.cells or {})[label]
        right = sum(r["answer"] == "B" for r in rows)  # the scripted responder answers B
        assert gen.graded == len(rows) and gen.correct == right
        qa = (gen.accuracy, gen.unanswered, gen.graded)
        assert (row.accuracy, row.unanswered, row.graded) == qa, label
        assert (cell.qa_accuracy, cell.unanswered, sum((cell.qa_graded or {}).values())) == qa
        assert cell.qa_accuracy == right / len(rows)
        assert sheet[row.strategy or ""]["qa_accuracy"] == points(cell.qa_accuracy)
