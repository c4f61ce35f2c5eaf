"""`murgat generate` and `murgat run` end to end: real vLLM engines on the local test models,
real media, every strategy, then the output scored (one response the scorer cannot read: its
QA accuracy counts the same everywhere); and a killed generation resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from support.cli import JUDGES, murgat, rows
from support.paths import ROOT, require_model
from support.resume_checks import cache_rows, check_verdicts, first_rows

pytestmark = [pytest.mark.engine, pytest.mark.slow]

DATASET = ROOT / "samples" / "questions.jsonl"
# A question with a field longer than the scorer reads (`[inputs] max_text_chars` at the top of
# the run file) and shorter than the generator does (`[generate.inputs]`): answered, not scored.
UNSCORED = "q-first"
NOTES = "x" * 6000


@pytest.fixture(scope="module")
def grid_inputs(tmp_path_factory, config):
    """(the dataset, the run file) of the grid: the sample's questions, one of them unscorable."""
    tmp = tmp_path_factory.mktemp("grid-inputs")
    rows = [json.loads(line) for line in DATASET.read_text().splitlines()]
    assert UNSCORED in {r["id"] for r in rows}
    dataset = tmp / "questions.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({**r, "notes": NOTES} if r["id"] == UNSCORED else r) + "\n" for r in rows
        )
    )
    run_file = tmp / "run.toml"
    run_file.write_text(
        config.read_text()
        + "[inputs]\nmax_text_chars = 4000\n[generate.inputs]\nmax_text_chars = 10000000\n"
    )
    return dataset, run_file


# The engines run inside the `murgat` child process under test: nothing for the pool to share.
@pytest.fixture(scope="module")
def grid(tmp_path_factory, media_root, grid_inputs):
    for m in ("tiny-qwen3-omni", "tiny-gemma3", "smollm2-135m-instruct"):
        require_model(m)
    dataset, config = grid_inputs
    out = tmp_path_factory.mktemp("run")
    proc = murgat(
        "run",
        dataset,
        "--media-root",
        media_root,
        "--out",
        out,
        "--config",
        config,
        "--model",
        "tiny-qwen3-omni",
        "--model",
        "tiny-gemma3",
        "--strategy",
        "base",
        "--strategy",
        "cite",
        "--strategy",
        "posthoc",
        *JUDGES,
        "--group-by",
        "question_type",
    )
    return out, proc


def test_every_strategy_on_both_models_is_generated_and_scored(grid):
    out, proc = grid
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    summary = json.loads((out / "run_summary.json").read_text())
    assert len(summary["grid"]) == 6
    n = len(DATASET.read_text().splitlines())
    for label, _cell in summary["grid"].items():
        gen = rows(out / label.replace("/", "__") / "responses.jsonl")
        assert len(gen) == n, label
        ok = [r for r in gen if r["status"] == "ok"]
        assert len(ok) == n, [r["error"] for r in gen if r["status"] != "ok"]
        for r in ok:
            assert r["model_generation"] and r["predicted"] is not None or r["unanswered"]
            assert r["answer_path"] in ("boxed", "answer_line", "judge", None)
        scores = rows(out / label.replace("/", "__") / "scores.jsonl")
        assert len(scores) == n and all(s["status"] == "ok" for s in scores if s["id"] != UNSCORED)
        (failed,) = [s for s in scores if s["id"] == UNSCORED]
        assert failed["status"] == "error" and "over the limit" in failed["error"], failed
        answered = next(r for r in gen if r["id"] == UNSCORED)
        # graded as generate graded it: the answer it read, right or wrong
        assert failed["correct"] == answered["correct"] is not None, (failed, answered)
        assert failed["answer"]["predicted"] == answered["predicted"], label
    qwen = rows(out / "tiny-qwen3-omni__base" / "responses.jsonl")
    gemma = rows(out / "tiny-gemma3__base" / "responses.jsonl")
    colors = next(r for r in qwen if r["id"] == "q-after-green")
    assert colors["media"]["heard_audio"] is True and colors["media"]["visual"]["fps"] == 2.0
    g = next(r for r in gemma if r["id"] == "q-after-green")
    assert g["media"]["heard_audio"] is False and g["media"]["visual"]["as_images"] is True
    assert g["media"]["visual"]["frames"] <= 8
    post = rows(out / "tiny-qwen3-omni__posthoc" / "responses.jsonl")
    assert all("posthoc" in r for r in post)
    for r in post:  # an accepted edit kept the prose; a rejected one kept the original
        if not r["posthoc"]["accepted"]:
            assert (
                r["model_generation"]
                == next(b for b in qwen if b["id"] == r["id"])["model_generation"]
            )
    gen_summary = json.loads((out / "generation_summary.json").read_text())
    assert not (out / "summary.json").exists()  # the generation's summary has its own name
    assert not any("QA accuracy" in w for w in summary["warnings"]), summary["warnings"]
    assert set(gen_summary["reasoning_tax"]) == {"tiny-qwen3-omni", "tiny-gemma3"}
    assert gen_summary["engines"]["tiny-qwen3-omni"]["output_tokens"] > 0
    assert "Accuracy and attribution" in proc.stdout
    check_tables(out, summary)
    check_one_accuracy_and_tax_everywhere(out, proc.stdout, summary, gen_summary)


def check_tables(out, run_summary):
    """tables.md and tables.csv hold each cell's summary.json numbers, x100 with one decimal."""
    import csv

    from murgat_local.reports.paper_table import COLUMNS, points

    assert run_summary["tables"] == [str(out / "tables.md"), str(out / "tables.csv")]
    sheet = list(csv.DictReader((out / "tables.csv").read_text().splitlines()))
    md = (out / "tables.md").read_text()
    assert len(sheet) == len(run_summary["grid"]) and "benchmark" not in sheet[0]  # one benchmark
    accuracy = {}
    for row in sheet:  # in the run's order (run_summary.json's keys are sorted)
        label = f"{row['model']}/{row['strategy']}"
        assert label in run_summary["grid"]
        cell = json.loads((out / label.replace("/", "__") / "summary.json").read_text())
        assert row["n"] == str(cell["scored"])
        assert set(cell["by_group"]) == {"question_type", "benchmark"}
        for m, _ in COLUMNS:
            ci = cell.get(f"{m}_ci") or ["", ""]
            want = ["" if v in (None, "") else points(v) for v in (cell[m], *ci)]
            assert [row[m], row[f"{m}_low"], row[f"{m}_high"]] == want, (label, m)
        accuracy[(row["model"], row["strategy"])] = cell["qa_accuracy"]
        assert f"| {row['model']} | {row['strategy']} | {row['n']} | " in md
    for row in sheet:
        base, cite = accuracy[(row["model"], "base")], accuracy[(row["model"], "cite")]
        assert row["reasoning_tax"] == ("" if None in (base, cite) else points(cite - base))
    assert "## Reasoning tax" in md


def check_one_accuracy_and_tax_everywhere(out, stdout, run_summary, gen_summary):
    """QA accuracy (unanswered counted wrong, with their count and rate) and the reasoning tax
    read the same in run_summary.json, the generation's summary.json, every cell's summary.json,
    tables.md, tables.csv and the terminal."""
    import csv

    from murgat_local.metrics.accuracy import reasoning_taxes
    from murgat_local.reports.paper_table import points
    from murgat_local.reports.table import _fmt

    shown = " ".join(stdout.split())  # the terminal's table, whatever it wrapped
    sheet = {
        (r["model"], r["strategy"]): r
        for r in csv.DictReader((out / "tables.csv").read_text().splitlines())
    }
    md = (out / "tables.md").read_text()
    accuracy = []
    for label, grid in run_summary["grid"].items():
        cell = json.loads((out / label.replace("/", "__") / "summary.json").read_text())
        gen = gen_summary["cells"][label]
        qa = (cell["qa_accuracy"], cell["unanswered"], cell["unanswered_rate"])
        assert qa[0] is not None and 0 <= qa[1] <= sum(cell["qa_graded"].values()), label
        assert (grid["accuracy"], grid["unanswered"], grid["unanswered_rate"]) == qa, label
        assert (gen["accuracy"], gen["unanswered"], gen["unanswered_rate"]) == qa, label
        assert gen["graded"] == sum(cell["qa_graded"].values()), label
        assert qa[1] == len(gen["unanswered_ids"]) and qa[2] == qa[1] / gen["graded"], label
        assert sheet[(grid["model"], grid["strategy"])]["qa_accuracy"] == points(qa[0])
        assert f"| {grid['model']} | {grid['strategy']} | {cell['scored']} | {points(qa[0])} " in md
        assert f"{_fmt(grid['rows'])} {_fmt(qa[0])} {_fmt(qa[1])} " in shown, (
            label
        )  # n, accuracy, unanswered
        accuracy.append((grid["model"], grid["strategy"], cell["qa_accuracy"]))
    taxes = reasoning_taxes(accuracy)
    assert set(taxes) == {"tiny-qwen3-omni", "tiny-gemma3"}
    for model, t in taxes.items():
        assert (
            run_summary["reasoning_tax"][model] == gen_summary["reasoning_tax"][model] == t["tax"]
        )
        assert t["tax"] == t["cite"] - t["base"]
        assert {r["reasoning_tax"] for (m, _), r in sheet.items() if m == model} == {
            points(t["tax"])
        }
        assert f"| {model} | {points(t['base'])} | {points(t['cite'])} | {points(t['tax'])} |" in md
        assert f"reasoning tax {model}: {_fmt(t['tax'])}" in shown


def test_generation_output_is_read_by_murgat_score_as_it_is(
    grid, grid_inputs, media_root, tmp_path
):
    out, _ = grid
    _, config = grid_inputs
    scored = murgat(
        "score",
        out / "tiny-gemma3__cite" / "responses.jsonl",
        "--media-root",
        media_root,
        "--out",
        tmp_path / "s",
        "--config",
        config,
        *JUDGES,
        "--cache",
        out / "cache.sqlite",
    )
    assert scored.returncode in (0, 1), scored.stderr[-2000:]
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert summary["scored"] == len(DATASET.read_text().splitlines()) - 1  # not UNSCORED
    # the same judges, prompts and cache as the run: nothing is judged again
    assert all(s["model_calls"] == 0 for s in summary["stages"].values())


def _generate(out, media_root, config, **kw):
    args = [
        sys.executable,
        "-m",
        "murgat_local.cli",
        "generate",
        str(DATASET),
        "--media-root",
        str(media_root),
        "--model",
        "tiny-qwen3-omni",
        "--strategy",
        "cite",
        "--samples",
        "2",
        "--temperature",
        "0.8",
        "--out",
        str(out),
        "--config",
        str(config),
    ]
    env = dict(os.environ)
    return args, env


def test_a_killed_generation_resumes_to_the_same_output(tmp_path, media_root, config):
    whole = tmp_path / "whole.jsonl"
    args, env = _generate(whole, media_root, config)
    first = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-2000:]
    out = tmp_path / "killed.jsonl"
    args, env = _generate(out, media_root, config)
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    db = out.with_suffix(".cache.sqlite")
    killed = first_rows(proc, db, "generate", poll=0.3)
    if killed is not None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert killed is not None and killed < 12, "the run finished before it could be killed"
    assert not out.exists()
    before = cache_rows(db)
    resumed = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads(out.with_suffix(".generation_summary.json").read_text())
    assert summary["calls"]["generate:tiny-qwen3-omni"]["cache_hits"] >= killed
    check_verdicts(before, cache_rows(whole.with_suffix(".cache.sqlite")), cache_rows(db))
    shape = lambda p: [(r["id"], r["sample"], r["status"], r["media"]) for r in rows(p)]  # noqa: E731
    assert shape(out) == shape(whole)
    assert summary["engines"]["tiny-qwen3-omni"]["output_tokens_per_s"] > 0


def test_every_file_the_grid_writes_is_of_its_schema(grid):
    """run_summary.json, generation_summary.json and each cell's responses.jsonl, scores.jsonl
    and summary.json carry the current `schema_version` and validate against the JSON Schema
    `murgat schema` prints."""
    jsonschema = pytest.importorskip("jsonschema")
    from murgat_local.results import CURRENT, SCHEMAS, layout

    out, _ = grid
    run_summary = json.loads((out / layout.RUN_SUMMARY).read_text())
    assert run_summary["schema_version"] == CURRENT
    jsonschema.validate(run_summary, SCHEMAS["run-summary"].model_json_schema())
    for label, cell in run_summary["grid"].items():
        folder = out / layout.cell_folder(cell["model"], cell["strategy"])
        assert folder.name == label.replace("/", "__")
        for name, schema in (
            (layout.RESPONSES, "generation-record"),
            (layout.SCORES, "score-record"),
        ):
            lines = rows(folder / name)
            assert lines and all(r["schema_version"] == CURRENT for r in lines), (label, name)
            for r in lines:
                jsonschema.validate(r, SCHEMAS[schema].model_json_schema())
        summary = json.loads((folder / layout.SUMMARY).read_text())
        jsonschema.validate(summary, SCHEMAS["summary"].model_json_schema())
    generation = json.loads((out / layout.GENERATION_SUMMARY).read_text())
    assert generation["schema_version"] == CURRENT
    jsonschema.validate(generation, SCHEMAS["generation-summary"].model_json_schema())
