"""`murgat report`'s numbers read from real score and run folders (OracleEngine judges, scripted
responders): the table equals summary.json, citation problems are counted, a corrupted folder
gives notes, two runs are told apart."""

from __future__ import annotations

import html
import json
import pathlib
import re
import shutil

import numpy as np
import pytest
from support.report_fixtures import ROWS, _score
from support.report_page import Page, _expected
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.reports.html import problems_table
from murgat_local.reports.scan import load


def _table(text):
    """Each summary row: its summary.json location and {metric: (data-value, shown text)}."""
    rows = []
    for path, key, body in re.findall(
        r'<tr data-cell="\d+" data-summary="([^"]*)" data-summary-key="([^"]*)">(.*?)</tr>',
        text,
        re.S,
    ):
        cells = {
            m: (json.loads(v) if v else None, re.sub(r"<[^>]+>", "", shown).split(" ")[0])
            for m, v, shown in re.findall(
                r'<td class="num" data-metric="(\w+)"(?: data-value="([^"]*)")?[^>]*>(.*?)</td>',
                body,
                re.S,
            )
        }
        rows.append(((html.unescape(path), html.unescape(key)), cells))
    return rows


def test_table_numbers_equal_summary_json(report, score_dir, run_dir):
    rows = _table(report.read_text())
    assert len(rows) == 3 + 4  # the score folder's three models; four run cells
    for where, cells in rows:
        summary = _expected(where)
        for metric in ("qa_accuracy", "coverage", "precision", "recall", "f1", "murgat_s"):
            value, shown = cells[metric]
            assert value == summary.get(metric), (where, metric)
            assert shown == ("-" if summary.get(metric) is None else f"{summary[metric]:.3f}")
        assert cells["responses"][1] == str(summary["responses"])


def test_citation_problems_and_hallucinated_audio(score_dir, run_dir):
    cells, _ = load([score_dir, run_dir], 100)
    by = {c.label.split(" (")[0]: c for c in cells}
    m1 = by["m1 / -"].citations
    assert m1[("audio", "silent_audio")] == 1 and m1[("visual", "supported")] >= 1
    assert m1[("visual", "unsupported")] >= 1
    assert dict(by["m2 / -"].citations) == {
        ("visual", "out_of_range"): 1,
        ("visual", "supported"): 1,
    }
    hostile = next(c for c in cells if c.model.startswith("m2</script>")).citations
    assert hostile[("visual", "malformed")] == 1 and hostile[("other", "malformed")] == 1
    assert not by["m1 / -"].heard_known  # a plain score folder has no generation rows
    gemma, qwen = by["tiny-gemma3 / cite"], by["tiny-qwen3-omni / cite"]
    rows = [
        json.loads(l)
        for l in (run_dir / "tiny-gemma3__cite" / "responses.jsonl").read_text().splitlines()
    ]
    assert gemma.deaf_responses == len(rows) and gemma.hallucinated_audio == len(rows)  # one each
    # qwen hears audio, except on the video that has none
    assert qwen.deaf_responses == 1 and qwen.hallucinated_audio == 1
    assert by["tiny-gemma3 / base"].hallucinated_audio == 0


def test_visual_citations_of_a_responder_that_saw_no_picture_are_counted(tmp_path, media_root):
    """An audio-only responder (Qwen2-Audio) is sent the soundtrack alone (media.saw_video false):
    each visual citation it writes cites something it never received."""
    from support.scripted import CITED, Scripted, run_generate

    gen = run_generate(
        tmp_path,
        media_root,
        {"tiny-qwen2-audio": Scripted("tiny-qwen2-audio")},
        strategies=("cite",),
        out="grid",
    )
    ((label, path),) = gen.outputs.items()
    written = [json.loads(l) for l in path.read_text().splitlines()]
    assert all(r["media"]["saw_video"] is False for r in written)
    scored = _score(media_root, written, path.parent)
    grid = {
        label: {
            **gen.summary.cells[label].model_dump(exclude_unset=True),
            "murgat_s": scored.summary.murgat_s,
            "scores": str(scored.records_path),
        }
    }
    (tmp_path / "grid" / "run_summary.json").write_text(json.dumps({"grid": grid}, default=str))
    (cell,), _ = load([tmp_path / "grid"], 100)
    deaf = sum(not r["media"]["heard_audio"] for r in written)  # a video without a soundtrack
    assert cell.blind_responses == len(written) and cell.deaf_responses == deaf
    assert cell.hallucinated_visual == len(written) * CITED.count("(visual,")
    html = problems_table([cell])
    assert (
        "visual citations without pictures" in html and f"{len(written)} responses saw none" in html
    )


def _rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


def _write_rows(path, rows, extra=()):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "".join(extra))


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory, score_dir, run_dir):
    """A score folder and two run folders, hand-edited in many ways."""
    tmp = tmp_path_factory.mktemp("corrupted")
    score = shutil.copytree(score_dir, tmp / "score")
    rows = _rows(score / "scores.jsonl")
    # line 1 ("seek"): values of the wrong kind throughout: not a score record
    seek = rows[0]
    s1, s2, s3 = seek["trace"]["sentences"][:3]
    s1["facts"][0]["without"] = ["x"]
    s1["facts"][0]["precise"] = "yes"
    s1["citations"][0]["start"] = "abc"
    s3["facts"] = {"x": 1}
    s3["verifiable"] = ["YES"]
    seek["trace"]["sentences"][1] = "junk"
    seek["correct"] = "maybe"
    # line 2 ("silent"): a trace that is text, and a key no score record has (named as markup)
    rows[1]["trace"] = "garbage"
    rows[1]["<img src=x onerror=alert(1)>"] = 1
    # line 3 (the hostile id): citations that are not objects
    rows[2]["trace"]["sentences"][0]["citations"] = [5, None]
    # line 4 ("bidi..."): a valid record with values the drill-down cannot draw (the schema
    # refuses a citation index that is not a number, a score out of [0, 1], a verdict of text)
    bidi = rows[3]
    sentence = bidi["trace"]["sentences"][0]
    sentence["citations"][0]["start"] = -1
    sentence["facts"][0]["alone"] = {
        "7": {"raw": "seventh", "value": False},
        "0": {"raw": "squared", "value": True},
    }
    # line 5 ("late"): a model that is an object
    rows[4]["model"] = {"a": 1}
    rows[5]["video"] = "\ud800.mp4"
    _write_rows(
        score / "scores.jsonl",
        rows,
        ["[" * 100_000 + "]" * 100_000 + "\n", "not json\n", "[]\n", '{"id": "cut'],
    )
    summary = json.loads((score / "summary.json").read_text())
    # valid numbers that cannot be drawn: an interval upside down, a time too large for a float
    summary["by_model"]["m2"]["f1_ci"] = [1, 0]
    summary["stages"]["entail"]["wall_s"] = 10**400
    (score / "summary.json").write_text(json.dumps(summary))

    run = shutil.copytree(run_dir, tmp / "run")
    rs = json.loads((run / "run_summary.json").read_text())
    rs["grid"]["ghost/base"] = {}
    rs["grid"][".."] = {}
    (run / "run_summary.json").write_text(json.dumps(rs))
    (run / "tiny-gemma3__cite" / "summary.json").write_text("{not json")
    summary = json.loads((run / "tiny-gemma3__base" / "summary.json").read_text())
    summary["stages"]["verifiable"] = "x"
    summary["models"] = "oracle"
    (run / "tiny-gemma3__base" / "summary.json").write_text(json.dumps(summary))
    gen = _rows(run / "tiny-qwen3-omni__base" / "responses.jsonl")
    gen[0]["media"] = "x"
    _write_rows(run / "tiny-qwen3-omni__base" / "responses.jsonl", gen, ["[]\n"])
    scores = (run / "tiny-qwen3-omni__cite" / "scores.jsonl").read_text()
    (run / "tiny-qwen3-omni__cite" / "scores.jsonl").write_text(scores[: len(scores) - 40])

    run2 = shutil.copytree(run_dir, tmp / "run2")
    (run2 / "run_summary.json").write_text("[1, 2")
    # a by_model entry that is not a summary's numbers: the summary is not a valid one
    (run2 / "tiny-gemma3__base" / "summary.json").write_text(
        '{"by_model": {"m1": {"responses": -3}}, "stages": [], "models": {"entail": 3}}'
    )
    return score, run, run2


def _notes(text):
    """The page's notes on the inputs and, per response id, the notes on that response."""
    page = re.search(r'<ul id="input-notes">(.*?)</ul>', text, re.S)
    inputs = [
        html.unescape(re.sub(r"<[^>]+>", "", n))
        for n in re.findall(r"<li>(.*?)</li>", page.group(1), re.S)
    ]
    by_response = {}
    for box in text.split('<details class="response"')[1:]:
        rid = re.search(r'<span class="rid">(.*?)</span>', box).group(1)
        body = re.search(r'<ul class="data-notes">(.*?)</ul>', box, re.S)
        by_response[html.unescape(rid)] = (
            [html.unescape(n) for n in re.findall(r"<li>(.*?)</li>", body.group(1))] if body else []
        )
    return inputs, by_response


def test_a_corrupted_folder_gives_a_page_with_notes(tmp_path, corrupted, media_root):
    score, run, run2 = corrupted
    out = tmp_path / "r.html"
    r = CliRunner().invoke(
        app,
        [
            "report",
            str(score),
            str(run),
            str(run2),
            "--out",
            str(out),
            "--media-root",
            str(media_root),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    text = out.read_text()
    inputs, responses = _notes(text)
    joined = "\n".join(inputs)
    for want in (
        "by_model.m2.f1_ci is a list of 2, not an interval",
        "score/summary.json: stages.entail.wall_s is the number 10000000000000000000…, not a "
        "number",
        # a summary.json that is not a summary: its file, its version, the fields at fault
        "run/tiny-gemma3__base/summary.json: not a schema_version 1 summary: ",
        "stages.verifiable: Input should be a valid dictionary",
        "models: Input should be a valid dictionary",
        "cell 'ghost/base' has no scores.jsonl",
        "cell '..' is not a folder inside",
        "tiny-gemma3__cite/summary.json: not JSON",
        "run2/run_summary.json: not JSON",
        "run2/tiny-gemma3__base/summary.json: not a schema_version 0 summary: by_model.m1."
        "responses: Input should be greater than or equal to 0 (got -3); stages: Input should be "
        "a valid dictionary",
        "models.entail: Input should be a valid string",
    ):
        assert want in joined, (want, inputs)
    scores = score / "scores.jsonl"
    for want in (
        # each line that is not a valid record: its file, its line, its version, the fields
        f"{scores} line 1: not a schema_version 1 score record: correct: Input should be a "
        "valid boolean",
        "trace.sentences.0.citations.0.start: Input should be a valid integer or Input should "
        "be a valid number (got 'abc')",
        f"{scores} line 2: not a schema_version 1 score record: ",
        "trace: Input should be a valid dictionary",
        "<img src=x onerror=alert(1)>: unknown field",
        f"{scores} line 3: not a schema_version 1 score record: "
        "trace.sentences.0.citations.0: Input should be a valid dictionary",
        f"{scores} line 5: not a schema_version 1 score record: model: Input should be a valid "
        "string",
        f"{scores} line 7: not JSON (nested too deeply)",
        f"{scores} line 8: not JSON",
        f"{scores} line 9: not a JSON object (a JSON list)",
        f"{scores} line 10: not JSON",
        f"{scores}: 8 unreadable lines skipped",
        "tiny-qwen3-omni__base/responses.jsonl line 1: not a schema_version 1 generation "
        "record: media: Input should be a valid dictionary",
        "tiny-qwen3-omni__base/responses.jsonl: 2 unreadable lines skipped",
        "tiny-qwen3-omni__cite/scores.jsonl: 1 unreadable line skipped",
    ):
        assert want in joined, (want, inputs)
    assert "<img src=x" not in text  # a key from the file is shown as text, never as markup
    # the unreadable lines are not drawn; every other record is
    assert "seek" not in responses and "silent" not in responses and "late" not in responses
    assert "<b>hostile</b>\"'" not in responses
    (bidi,) = [notes for rid, notes in responses.items() if rid.startswith("bidi")]
    assert "escape" in responses
    bidi = "\n".join(bidi)
    for want in (
        "sentence 1, fact 1: alone key '7' names no citation of the sentence (it has 1)",
        "sentence 1, citation 1: start is the number -1, not a time in seconds",
    ):
        assert want in bidi, (want, bidi)
    assert "no player: video" in text  # the lone surrogate names no file
    assert "citation 1 alone" in text and "squared" in text  # the raw outputs are still shown
    # every cell keeps its row: an unknown or undrawable number shows as -
    rows = _table(text)
    assert len(rows) == 3 + 4 + 4  # m1, m2 and the hostile model; the ghost cells left out
    by_key = {key: cells for (path, key), cells in rows}
    m1, m2 = by_key['["by_model", "m1"]'], by_key['["by_model", "m2"]']
    assert all(m[k][1] != "-" for m in (m1, m2) for k in ("precision", "f1", "responses"))


def test_many_unreadable_lines_are_listed_then_counted(tmp_path, score_dir):
    """Each unreadable line is named (file, line, why) up to a limit, then counted: never dropped
    unsaid; the valid records around them are all read."""
    from murgat_local.reports.scan import LISTED_LINES

    score = shutil.copytree(score_dir, tmp_path / "score")
    rows = _rows(score / "scores.jsonl")
    bad = [json.dumps({**rows[0], "coverage": "high"}) + "\n"] * (LISTED_LINES + 5)
    _write_rows(score / "scores.jsonl", rows, bad)
    cells, (source,) = load([score], 100)
    scores = score / "scores.jsonl"
    listed = [n for n in source.notes if n.startswith(f"{scores} line ")]
    assert len(listed) == LISTED_LINES
    assert listed[0].startswith(
        f"{scores} line {len(rows) + 1}: not a schema_version 1 score record: coverage: "
    )
    total = LISTED_LINES + 5
    assert f"{scores}: {total} unreadable lines skipped, 5 more not listed" in source.notes
    assert sum(c.records for c in cells) == len(rows) and source.unreadable == total


@pytest.fixture(scope="module")
def two_judges(tmp_path_factory, media_root):
    """`murgat score` twice on the same responses (no model named), the second with another entailer."""
    tmp = tmp_path_factory.mktemp("judges")
    rows = [{k: v for k, v in r.items() if k != "model"} for r in ROWS[:2] + ROWS[4:5]]
    _score(media_root, rows, tmp / "runA")
    _score(media_root, rows, tmp / "runB", entailer="strict")
    return tmp / "runA", tmp / "runB"


def test_two_runs_are_told_apart(tmp_path, two_judges):
    from murgat_local.reports import plots

    a, b = two_judges
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    rows = re.findall(
        r'<tr data-cell="\d+".*?<td class="run"[^>]*>(.*?)</td><td class="judges">(.*?)</td>',
        text,
        re.S,
    )
    assert [html.unescape(run) for run, _ in rows] == ["runA", "runB"]
    assert html.unescape(rows[0][1]) == "oracle (every stage)"
    assert html.unescape(rows[1][1]) == "decontext, verifiable, decompose: oracle · entail: strict"
    data = json.loads(Page(text).scripts[0][1])
    assert [(t["run"], t["judges"]["entail"]) for t in data["table"]] == [
        ("runA", "oracle"),
        ("runB", "strict"),
    ]

    cells, sources = load([a, b], 10)
    assert [c.label for c in cells] == ["runA", "runB"]
    figures = plots.figures(cells, sources)
    for key in ("accuracy-vs-murgat", "coverage-vs-f1"):
        ax = figures[key].axes[0]
        points = {
            c.get_label(): (c.lines[0].get_color(), c.lines[0].get_marker()) for c in ax.containers
        }
        assert set(points) == {"runA", "runB"}, key
        (ca, ma), (cb, mb) = points["runA"], points["runB"]
        assert ca != cb and ma != mb, (key, points)
    dots = figures["murgat-distribution"].axes[0].collections
    assert len(dots) == 2 and dots[0].get_facecolor().tolist() != dots[1].get_facecolor().tolist()
    assert not np.array_equal(
        dots[0].get_paths()[0].vertices, dots[1].get_paths()[0].vertices
    )  # markers
    for ax in figures["stages"].axes:
        bars = {c.get_label(): tuple(c.patches[0].get_facecolor()) for c in ax.containers}
        assert {"runA", "runB"} <= set(bars) and bars["runA"] != bars["runB"], bars


def test_run_names_are_distinct_suffixes():
    from murgat_local.reports.rundata import run_names

    P = pathlib.Path
    assert run_names([P("/x/a/score"), P("/x/b/score"), P("/y/other")]) == [
        "a/score",
        "b/score",
        "other",
    ]
    assert run_names([P("/x/score"), P("/x/score")]) == ["score", "score (2)"]
    assert run_names([P("/r/a/b/c"), P("/r/z/b/c"), P("/r/q/c")]) == ["a/b/c", "z/b/c", "q/c"]
