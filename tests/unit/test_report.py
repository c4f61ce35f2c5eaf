"""`murgat report`: the HTML file from real score and run folders (OracleEngine judges, scripted
responders), checked as text and, in a real headless Chromium (Debian's package, driven over
the DevTools protocol), as a page: no console errors, the table equals summary.json, the plots
are decoded non-blank images, and clicking a citation seeks the video. Screenshots are kept in
.local/test-artifacts/report/."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import pathlib
import re
import shutil
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser

import numpy as np
import pytest
from support.chromium import DevTools, _chromium
from support.fakes import OracleEngine
from support.paths import ROOT
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.pipeline.runner import Runner
from murgat_local.reports.html import build, json_for_script, problems_table
from murgat_local.reports.scan import load

ARTIFACTS = ROOT / ".local" / "test-artifacts" / "report"
HOSTILE = (
    "<script>alert(1)</script> the screen is \"red\" 'x' </script><img src=x onerror=alert(2)> "
    "see https://example.com/a.png (visual, 0:00; visual, 9:99). </script> Also (bogus, 1:00)."
)
ROWS = [
    {
        "id": "seek",
        "video": "colors",
        "model": "m1",
        "answer": "A",
        "model_generation": "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:02). "
        "The screen is green (visual, 0:05-0:07). Therefore A.\nAnswer: A",
    },
    {
        "id": "silent",
        "video": "silent",
        "model": "m1",
        "model_generation": "The screen is blue (visual, 0:01) and a voice speaks (audio, 0:01). So B.\nAnswer: B",
    },
    {
        "id": "<b>hostile</b>\"'",
        "video": "colors",
        "model": "m2</script><script>alert(3)</script>",
        "model_generation": HOSTILE,
    },
    {
        "id": "bidi\u202etxt.exe\x1b[31m",
        "video": "colors",
        "model": "m2",
        "model_generation": "Red (visual, 0:00).",
    },
    {
        "id": "late",
        "video": "colors",
        "model": "m2",
        "model_generation": "The screen is red (visual, 0:30).",
    },
    {"id": "escape", "video": "../../etc/passwd", "model": "m2", "model_generation": "x"},
]


def _score(media_root, rows, out, entailer=None):
    """`murgat score` on `rows` with oracle judges (`entailer`: another oracle for that stage)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    p = out.parent / f"{out.name}.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    engines = {"oracle": OracleEngine()}
    if entailer:
        engines[entailer] = OracleEngine(name=entailer, salt=entailer)
    runner = Runner(
        RunConfig(judge="oracle", entailer=entailer, decontextualize=False),
        media_root,
        out,
        engines=engines,
    )
    try:
        return runner.run(p)
    finally:
        runner.close()


@pytest.fixture(scope="module")
def score_dir(tmp_path_factory, media_root):
    out = tmp_path_factory.mktemp("report") / "score"
    _score(media_root, ROWS, out)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, media_root):
    """A `murgat run` folder as the command writes it: scripted responders, oracle judges."""
    from support.scripted import Scripted, run_generate

    tmp = tmp_path_factory.mktemp("run")
    engines = {
        "tiny-qwen3-omni": Scripted("tiny-qwen3-omni"),
        "tiny-gemma3": Scripted("tiny-gemma3"),
    }
    gen = run_generate(tmp, media_root, engines, strategies=("base", "cite"), out="grid")
    grid = {}
    for label, path in gen.outputs.items():
        scored = _score(
            media_root, [json.loads(l) for l in path.read_text().splitlines()], path.parent
        )
        grid[label] = {
            **gen.summary["cells"][label],
            "murgat_s": scored.summary["murgat_s"],
            "scores": str(scored.records_path),
        }
    (tmp / "grid" / "run_summary.json").write_text(json.dumps({"grid": grid}, default=str))
    return tmp / "grid"


@pytest.fixture(scope="module")
def report(tmp_path_factory, score_dir, run_dir, media_root):
    out = tmp_path_factory.mktemp("html") / "report.html"
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(score_dir),
            str(run_dir),
            "--out",
            str(out),
            "--media-root",
            str(media_root),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


class Page(HTMLParser):
    """Elements (tag, attrs) and the text of each <script>."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.scripts, self._in = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data


# ------------------------------------------------------------------ the file, as text


def test_no_network_reference(report):
    text = report.read_text()
    page = Page(text)
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            if name in ("src", "href", "poster", "action", "data", "srcset"):
                assert value.startswith(("data:image/png;base64,", "file:///")), (
                    tag,
                    name,
                    value[:80],
                )
    # URLs only as escaped text from the input (the hostile response names one)
    for m in re.finditer(r"https?://", text):
        context = text[max(0, m.start() - 200) : m.start()]
        assert "see " in context[-10:], context[-120:]
    assert "<link" not in text and "@import" not in text and "url(" not in text


def test_hostile_text_is_escaped_and_creates_no_element(report):
    text = report.read_text()
    page = Page(text)
    scripts = page.scripts
    assert len(scripts) == 2, [s[0] for s in scripts]  # the data block and ours
    assert scripts[0][0] == {"type": "application/json", "id": "report-data"}
    assert "alert" not in scripts[1][1]
    data = json.loads(scripts[0][1])
    assert any("</script>" in r["model"] for r in data["table"])  # kept as data, inert
    assert not any(tag == "img" and attrs.get("src") == "x" for tag, attrs in page.elements)
    assert not any("onerror" in attrs for _, attrs in page.elements)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(2)&gt;" in text
    assert "&lt;b&gt;hostile&lt;/b&gt;&quot;&#x27;" in text
    assert "\u202e" not in text and "\x1b" not in text and "bidi\\u202etxt.exe\\x1b[31m" in text


def test_sound_folders_give_no_notes(report):
    """Everything `murgat score` and `murgat run` write reads as they wrote it: no note anywhere."""
    text = report.read_text()
    assert 'id="input-notes"' not in text and '<ul class="data-notes">' not in text
    assert "malformed value" not in text


def test_json_for_script_cannot_close_its_element():
    s = json_for_script({"a": "</script><!-- \u2028 & >", "n": float("nan")})
    assert "<" not in s and ">" not in s and "\u2028" not in s
    assert json.loads(s) == {"a": "</script><!-- \u2028 & >", "n": None}


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


def _expected(where):
    path, key = where
    summary = json.loads(pathlib.Path(path).read_text())
    for k in json.loads(key):
        summary = summary[k]
    return summary


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


def _plots(text):
    return {
        m.group(1): base64.b64decode(m.group(2))
        for m in re.finditer(
            r'<img id="plot-([\w-]+)" class="plot" alt="[^"]*" src="data:image/png;base64,([^"]+)"',
            text,
        )
    }


def test_plots_are_non_uniform_pngs(report):
    from PIL import Image

    plots = _plots(report.read_text())
    assert set(plots) == {
        "accuracy-vs-murgat",
        "coverage-vs-f1",
        "murgat-distribution",
        "citation-problems",
        "hallucinated-audio",
        "stages",
    }
    for name, png in plots.items():
        assert png[:8] == b"\x89PNG\r\n\x1a\n", name
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100 and pixels.std() > 5, name


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
            **gen.summary["cells"][label],
            "murgat_s": scored.summary["murgat_s"],
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


def test_drilldown_is_capped_and_says_so(tmp_path, score_dir, media_root):
    out = tmp_path / "r.html"
    result = build([score_dir], out, media_root=media_root, max_responses=2)
    text = out.read_text()
    assert result.shown == 2 and text.count('<details class="response"') == 2
    assert "Showing 2 of 6 responses" in text and "--max-responses 2" in text
    every = build([score_dir], out, media_root=media_root, max_responses=300)
    assert every.shown == every.responses == 6 and "All 6 responses" in out.read_text()


def test_videos_stay_inside_the_media_root(tmp_path, score_dir, media_root):
    text = build([score_dir], tmp_path / "r.html", media_root=media_root).path.read_text()
    srcs = re.findall(r'<video [^>]*src="([^"]+)"', text)
    assert srcs and all(s == (media_root.resolve() / pathlib.Path(s).name).as_uri() for s in srcs)
    assert "no player: video path &#x27;../../etc/passwd&#x27; escapes the media root" in text
    rel = build(
        [score_dir], tmp_path / "sub" / "rel.html", media_root=media_root, relative_media=True
    )
    want = os.path.relpath(media_root.resolve() / "colors.mp4", tmp_path / "sub")
    assert f'src="{want}"' in rel.path.read_text()
    bare = build([score_dir], tmp_path / "bare.html").path.read_text()
    assert "<video" not in bare and "No --media-root given" in bare


def test_ten_thousand_responses_stay_usable(tmp_path, score_dir):
    big = tmp_path / "big"
    big.mkdir()
    lines = (score_dir / "scores.jsonl").read_text().splitlines()
    with open(big / "scores.jsonl", "w") as f:
        for k in range(10_000):
            f.write(lines[k % len(lines)] + "\n")
    shutil.copy(score_dir / "summary.json", big / "summary.json")
    t0 = time.monotonic()
    result = build([big], tmp_path / "big.html", max_responses=300)
    took = time.monotonic() - t0
    text = result.path.read_text()
    assert (
        result.responses == 10_000
        and result.shown == 300
        and text.count('<details class="response"') == 300
    )
    assert "Showing 300 of 10000 responses" in text
    assert took < 60 and len(text) < 8_000_000, (took, len(text))


def test_cli_usage_errors_exit_2(tmp_path, score_dir):
    r = CliRunner().invoke(
        app, ["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r.html")]
    )
    assert r.exit_code == 2 and "is not a folder" in " ".join(r.output.split())
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(
        app, ["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")]
    )
    assert r.exit_code == 2 and "neither" in " ".join(r.output.split())
    r = CliRunner().invoke(
        app,
        [
            "report",
            str(score_dir),
            "--out",
            str(tmp_path / "r.html"),
            "--media-root",
            str(tmp_path / "nope"),
        ],
    )
    assert r.exit_code == 2
    assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------------ hostile names and corrupted folders


def _texts(fig):
    import matplotlib.text

    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


MATH_MODELS = ["$a^b^c$", "$\\nosuchcommand$", "m_{3}$"]


def test_names_that_look_like_math_are_plain_text(tmp_path, media_root):
    """Model, run and stage names reach matplotlib as text: `$a^b^c$` is not mathtext."""
    from murgat_local.reports import plots

    rows = [
        {
            "id": f"r{i}",
            "video": "colors",
            "model": m,
            "model_generation": "The screen is red (visual, 0:00).",
        }
        for i, m in enumerate(MATH_MODELS)
    ]
    a = tmp_path / "$x^$" / "score"
    _score(media_root, rows, a)
    b = tmp_path / "$\\bad" / "score"
    shutil.copytree(a, b)
    summary = json.loads((b / "summary.json").read_text())
    summary["stages"]["$\\frac{$"] = {"calls": 2, "model_calls": 2, "cache_hits": 0, "wall_s": 0.5}
    summary["models"]["entail"] = "$\\undefined$"
    (b / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(out)])
    assert r.exit_code == 0, r.output
    cells, sources = load([a, b], 10)
    figures = plots.figures([c for c in cells if c.in_table], sources)
    shown = set()
    for fig in figures.values():
        plots.png(fig)  # renders, as the report does, then the texts are read back
        for t in _texts(fig):
            shown.add(t.get_text())
            if "$" in t.get_text():
                assert not t.get_parse_math(), t.get_text()
    for m in MATH_MODELS:
        assert f"{m} / - ($x^$/score)" in shown and f"{m} / - ($\\bad/score)" in shown
    assert "$\\frac{$" in shown


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
    seek = rows[0]
    s1, s2, s3 = seek["trace"]["sentences"][:3]
    fact = s1["facts"][0]
    fact["alone"] = {
        "²": {"raw": "squared", "value": True},
        "7": {"raw": "seventh", "value": False},
        "0": {"raw": "first", "value": True},
        "9" * 5000: {"raw": "huge", "value": True},
    }
    fact["without"] = ["x"]
    fact["precise"] = "yes"
    s1["citations"][0]["start"] = "abc"
    s3["facts"] = {"x": 1}
    s3["verifiable"] = ["YES"]
    seek["trace"]["sentences"][1] = "junk"
    seek["murgat_s"], seek["coverage"], seek["correct"], seek["f1"] = (
        "0.5",
        float("inf"),
        "maybe",
        10**400,
    )
    s1["citations"][0]["end"] = -(10**400)
    rows[1]["trace"] = "garbage"
    rows[2]["trace"]["sentences"][0]["citations"] = [5, None]
    rows[4]["model"] = {"a": 1}
    rows[5]["video"] = "\ud800.mp4"
    _write_rows(
        score / "scores.jsonl",
        rows,
        ["[" * 100_000 + "]" * 100_000 + "\n", "not json\n", "[]\n", '{"id": "cut'],
    )
    summary = json.loads((score / "summary.json").read_text())
    summary["by_model"]["m1"]["coverage"] = "high"
    summary["by_model"]["m1"]["f1_ci"] = [0, "x"]
    summary["by_model"]["m1"]["responses"] = -3
    summary["by_model"]["m1"]["precision"] = 10**400
    summary["by_model"]["m2"] = [1, 2]
    summary["stages"]["entail"]["wall_s"] = "fast"
    summary["stages"]["verifiable"] = "x"
    summary["models"] = "oracle"
    (score / "summary.json").write_text(json.dumps(summary))

    run = shutil.copytree(run_dir, tmp / "run")
    rs = json.loads((run / "run_summary.json").read_text())
    rs["grid"]["ghost/base"] = {}
    rs["grid"][".."] = {}
    (run / "run_summary.json").write_text(json.dumps(rs))
    (run / "tiny-gemma3__cite" / "summary.json").write_text("{not json")
    gen = _rows(run / "tiny-qwen3-omni__base" / "responses.jsonl")
    gen[0]["media"] = "x"
    _write_rows(run / "tiny-qwen3-omni__base" / "responses.jsonl", gen, ["[]\n"])
    scores = (run / "tiny-qwen3-omni__cite" / "scores.jsonl").read_text()
    (run / "tiny-qwen3-omni__cite" / "scores.jsonl").write_text(scores[: len(scores) - 40])

    run2 = shutil.copytree(run_dir, tmp / "run2")
    (run2 / "run_summary.json").write_text("[1, 2")
    (run2 / "tiny-gemma3__base" / "summary.json").write_text(
        '{"stages": [], "models": {"entail": 3}}'
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
        "4 unreadable lines",
        "by_model.m1.coverage is the text 'high', not a number",
        "by_model.m1.f1_ci is a list of 2, not an interval",
        "by_model.m1.responses is the number -3, not a count",
        "by_model.m1.precision is the number 10000000000000000000…, not a number",
        "by_model.m2 is a list of 2, not an object",
        "stages.entail.wall_s is the text 'fast', not a number",
        "stages.verifiable is the text 'x', not an object",
        "models is the text 'oracle', not an object",
        "cell 'ghost/base' has no scores.jsonl",
        "cell '..' is not a folder inside",
        "summary.json cannot be read as JSON",
        "media is the text 'x', not an object",
        "run_summary.json cannot be read as JSON",
        "stages is a list of 0, not an object",
        "models.entail is the number 3, not a model name",
    ):
        assert want in joined, (want, inputs)
    assert joined.count("1 unreadable line") >= 2  # the cut line; the [] generation row
    seek = "\n".join(responses["seek"])
    for want in (
        "sentence 1, fact 1: alone key '²' is not a citation number",
        "sentence 1, fact 1: alone key '7' names no citation of the sentence (it has 1)",
        "sentence 1, fact 1: alone key '99999",
        "sentence 1, fact 1: without is a list of 1, not an object",
        "sentence 1, fact 1: precise is the text 'yes', not a list",
        "sentence 1, citation 1: start is the text 'abc', not a time in seconds",
        "sentence 2 is the text 'junk', not an object",
        "sentence 3: facts is an object, not a list",
        "sentence 3: verifiable is a list of 1, not a verdict",
        "murgat_s is the text '0.5', not a number",
        "coverage is the value inf, not a number",
        "correct is the text 'maybe', not true or false",
        "f1 is the number 10000000000000000000…, not a number",
        "sentence 1, citation 1: end is the number -1000000000000000000…, not a time in seconds",
    ):
        assert want in seek, (want, responses["seek"])
    assert "trace is the text 'garbage', not an object" in "\n".join(responses["silent"])
    assert "sentence 1, citation 1 is the number 5, not an object" in "\n".join(
        responses["<b>hostile</b>\"'"]
    )
    assert "no player: video" in text  # the lone surrogate names no file
    assert "citation 1 alone" in text and "squared" in text  # the raw outputs are still shown
    # every row of the table still reads its numbers; a bad one shows as -
    rows = _table(text)
    assert (
        len(rows) == 2 + 4 + 4
    )  # m1 and the hostile model (m2 has no numbers); the ghost cells left out
    m1 = next(cells for (path, key), cells in rows if json.loads(key) == ["by_model", "m1"])
    assert m1["coverage"] == (None, "-") and m1["f1"][1] != "-"


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


def test_csp_allows_only_the_page_script_by_its_hash(report):
    import hashlib

    text = report.read_text()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text).group(1)
    rules = {r.split()[0]: r.split()[1:] for r in csp.split(";") if r.strip()}
    assert "'unsafe-inline'" not in rules["script-src"]
    script = Page(text).scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert rules["script-src"] == [f"'sha256-{digest}'"]
    assert rules["base-uri"] == ["'none'"] and rules["form-action"] == ["'none'"]
    assert rules["default-src"] == ["'none'"]


ODD_VIDEO = "https:host/a #1?b%41"


@pytest.fixture(scope="module")
def odd_names(tmp_path_factory, media_root):
    """A score folder whose one response's video sits at `https:host/a #1?b%41.mp4`."""
    tmp = tmp_path_factory.mktemp("odd")
    root = tmp / "media #?%"
    (root / "https:host").mkdir(parents=True)
    shutil.copy(media_root / "colors.mp4", root / f"{ODD_VIDEO}.mp4")
    _score(
        root,
        [
            {
                "id": "odd",
                "video": ODD_VIDEO,
                "model": "m",
                "model_generation": "The screen is green (visual, 0:05-0:07).",
            }
        ],
        tmp / "score",
    )
    return tmp / "score", root


def test_media_links_are_url_encoded(tmp_path, odd_names):
    from urllib.parse import unquote, urlsplit

    score, root = odd_names
    real = (root / f"{ODD_VIDEO}.mp4").resolve()
    for relative, page in ((True, tmp_path / "sub #1" / "r.html"), (False, tmp_path / "abs.html")):
        build([score], page, media_root=root, relative_media=relative)
        (src,) = [
            html.unescape(s) for s in re.findall(r'<video [^>]*src="([^"]+)"', page.read_text())
        ]
        assert not re.search(r"[#?]", src) and ":" not in src.split("file://")[-1], src
        resolved = urlsplit(urllib.parse.urljoin(page.resolve().as_uri(), src))
        assert resolved.scheme == "file" and not resolved.query and not resolved.fragment, src
        assert unquote(resolved.path) == str(real), src


# ------------------------------------------------------------------ the page, in Chromium


PAGE_CHECKS = """(() => {
  const rows = [...document.querySelectorAll('#summary-table tbody tr')].map(tr => {
    const cells = {};
    tr.querySelectorAll('td[data-metric]').forEach(td => {
      cells[td.dataset.metric] = {value: td.dataset.value === undefined ? null : Number(td.dataset.value),
                                  shown: td.textContent.trim().split(' ')[0]};
    });
    return {where: [tr.dataset.summary, tr.dataset.summaryKey], cells};
  });
  const plots = [...document.querySelectorAll('img.plot')].map(img => {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0, s = 0, s2 = 0;
    for (let i = 0; i < d.length; i += 4) { const g = (d[i] + d[i+1] + d[i+2]) / 3; n++; s += g; s2 += g * g; }
    const mean = s / n;
    return {id: img.id, complete: img.complete, w: img.naturalWidth, h: img.naturalHeight,
            std: Math.sqrt(Math.max(0, s2 / n - mean * mean))};
  });
  return {rows, plots, data: JSON.parse(document.getElementById('report-data').textContent)};
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium for the module's page tests; each test opens its page with `visit`."""
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's `chromium`)")
    pytest.importorskip(
        "websocket", reason="websocket-client is not installed (scripts/setup.sh installs it)"
    )
    browser = DevTools(binary, tmp_path_factory.mktemp("chromium"))
    try:
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable")
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        # every Content-Security-Policy violation, as the page itself would see it
        browser.call("Page.addScriptToEvaluateOnNewDocument", source=CSP_RECORDER)
        yield browser
    finally:
        browser.close()


CSP_RECORDER = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.effectiveDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));"""


def visit(browser, page: pathlib.Path) -> None:
    browser.events.clear()
    browser.call("Page.navigate", url=page.as_uri())
    browser.wait_event("Page.loadEventFired")


def _click_and_wait(browser, start: str) -> dict:
    """Click (a real mouse event) the citation whose span starts at `start`; the player's state
    once it has seeked there (or after 10 s)."""
    rect = browser.js(f"""(() => {{
      const chip = [...document.querySelectorAll('.cite[data-start]')].find(c => c.dataset.start === '{start}');
      const box = chip.closest('details.response'); box.open = true;
      chip.scrollIntoView({{block: 'center'}});
      const r = chip.getBoundingClientRect();
      return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};
    }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        browser.call(
            "Input.dispatchMouseEvent",
            type=kind,
            x=rect["x"],
            y=rect["y"],
            button="left",
            clickCount=1,
        )
    state = None
    for _ in range(100):
        state = browser.js("""(() => {
          const v = document.querySelector('.cite.active').closest('details.response').querySelector('video');
          return {t: v.currentTime, ready: v.readyState, err: v.error && v.error.code, paused: v.paused,
                  src: v.currentSrc, duration: v.duration};
        })()""")
        if state["ready"] >= 1 and state["t"] >= float(start):
            break
        time.sleep(0.1)
    return state


@pytest.mark.slow
def test_the_page_in_headless_chromium(report, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visit(browser, report)
    browser.screenshot(ARTIFACTS / "1-summary.png")

    got = browser.js(PAGE_CHECKS)
    assert len(got["rows"]) == 7
    for row in got["rows"]:
        summary = _expected(row["where"])
        for metric in ("qa_accuracy", "coverage", "precision", "recall", "f1", "murgat_s"):
            cell = row["cells"][metric]
            want = summary.get(metric)
            assert cell["value"] == want, (row["where"], metric)
            assert cell["shown"] == ("-" if want is None else f"{want:.3f}"), (row["where"], metric)
    assert len(got["plots"]) == 6
    for p in got["plots"]:
        assert p["complete"] and p["w"] > 100 and p["h"] > 100 and p["std"] > 5, p
    assert any("</script>" in r["model"] for r in got["data"]["table"])
    browser.js("document.querySelector('.plots').scrollIntoView()")
    browser.screenshot(ARTIFACTS / "2-plots.png")

    # Open the response that cites 0:05-0:07 and click that citation, as a user would: the page's
    # script runs under the hash-only policy.
    state = _click_and_wait(browser, "5.0")
    assert state["err"] is None, state
    assert state["ready"] >= 1 and abs(state["duration"] - 8.0) < 0.2, state
    assert 5.0 <= state["t"] <= 7.5, state
    browser.screenshot(ARTIFACTS / "3-citation-clicked.png")
    browser.screenshot(ARTIFACTS / "4-full-page.png", full=True)
    assert browser.errors() == []
    assert browser.js("window.__csp") == []
    # our style sheet applies under its hash
    assert (
        browser.js("getComputedStyle(document.querySelector('#summary-table')).borderCollapse")
        == "collapse"
    )
    # an inline script the policy does not name is refused, and both collectors see it
    browser.js(
        "(() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
        " document.body.appendChild(s); })()"
    )
    for _ in range(50):
        if browser.errors():
            break
        time.sleep(0.1)
        browser.js("0")  # reads the events that arrived meanwhile
    assert browser.js("window.__ran") is None
    assert [v.split()[0] for v in browser.js("window.__csp")] == ["script-src-elem"]
    assert len(browser.errors()) == 1 and "Content Security Policy" in browser.errors()[0]
    browser.js("console.error('probe')")  # the console collector works too
    browser.wait_event("Runtime.consoleAPICalled", timeout=5)
    assert len(browser.errors()) == 2


@pytest.mark.slow
def test_odd_media_names_play_in_chromium(browser, odd_names, tmp_path):
    """A video at `media #?%/https:host/a #1?b%41.mp4`, linked by a relative path and by a file:// URL,
    is the file the player loads and seeks in."""
    from urllib.parse import unquote, urlsplit

    score, root = odd_names
    real = (root / f"{ODD_VIDEO}.mp4").resolve()
    for relative, page in ((True, tmp_path / "sub #1" / "r.html"), (False, tmp_path / "abs.html")):
        build([score], page, media_root=root, relative_media=relative)
        visit(browser, page)
        state = _click_and_wait(browser, "5.0")
        assert (
            state["err"] is None and state["ready"] >= 1 and abs(state["duration"] - 8.0) < 0.2
        ), (relative, state)
        assert 5.0 <= state["t"] <= 7.5, (relative, state)
        src = urlsplit(state["src"])
        assert src.scheme == "file" and unquote(src.path) == str(real), (relative, state["src"])
        assert browser.errors() == [] and browser.js("window.__csp") == [], relative
