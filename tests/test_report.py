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
import subprocess
import tempfile
import time
import urllib.request
from html.parser import HTMLParser

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import ROOT
from fakes import OracleEngine
from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.pipeline.runner import Runner
from murgat_local.reports.html import build, json_for_script
from murgat_local.reports.rundata import load

ARTIFACTS = ROOT / ".local" / "test-artifacts" / "report"
HOSTILE = ('<script>alert(1)</script> the screen is "red" \'x\' </script><img src=x onerror=alert(2)> '
           'see https://example.com/a.png (visual, 0:00; visual, 9:99). </script> Also (bogus, 1:00).')
ROWS = [
    {"id": "seek", "video": "colors", "model": "m1", "answer": "A",
     "model_generation": "The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:02). "
                         "The screen is green (visual, 0:05-0:07). Therefore A.\nAnswer: A"},
    {"id": "silent", "video": "silent", "model": "m1",
     "model_generation": "The screen is blue (visual, 0:01) and a voice speaks (audio, 0:01). So B.\nAnswer: B"},
    {"id": "<b>hostile</b>\"'", "video": "colors", "model": "m2</script><script>alert(3)</script>",
     "model_generation": HOSTILE},
    {"id": "bidi\u202etxt.exe\x1b[31m", "video": "colors", "model": "m2", "model_generation": "Red (visual, 0:00)."},
    {"id": "late", "video": "colors", "model": "m2", "model_generation": "The screen is red (visual, 0:30)."},
    {"id": "escape", "video": "../../etc/passwd", "model": "m2", "model_generation": "x"},
]


def _score(media_root, rows, out):
    out.parent.mkdir(parents=True, exist_ok=True)
    p = out.parent / f"{out.name}.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    runner = Runner(RunConfig(judge="oracle", decontextualize=False), media_root, out,
                    engines={"oracle": OracleEngine()})
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
    from test_generate import Scripted, run_generate

    tmp = tmp_path_factory.mktemp("run")
    engines = {"tiny-qwen3-omni": Scripted("tiny-qwen3-omni"), "tiny-gemma3": Scripted("tiny-gemma3")}
    gen = run_generate(tmp, media_root, engines, strategies=("base", "cite"), out="grid")
    grid = {}
    for label, path in gen.outputs.items():
        scored = _score(media_root, [json.loads(l) for l in path.read_text().splitlines()], path.parent)
        grid[label] = {**gen.summary["cells"][label], "murgat_s": scored.summary["murgat_s"],
                       "scores": str(scored.records_path)}
    (tmp / "grid" / "run_summary.json").write_text(json.dumps({"grid": grid}, default=str))
    return tmp / "grid"


@pytest.fixture(scope="module")
def report(tmp_path_factory, score_dir, run_dir, media_root):
    out = tmp_path_factory.mktemp("html") / "report.html"
    result = CliRunner().invoke(app, ["report", str(score_dir), str(run_dir), "--out", str(out),
                                      "--media-root", str(media_root)])
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
                assert value.startswith(("data:image/png;base64,", "file:///")), (tag, name, value[:80])
    # URLs only as escaped text from the input (the hostile response names one)
    for m in re.finditer(r"https?://", text):
        context = text[max(0, m.start() - 200): m.start()]
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


def test_json_for_script_cannot_close_its_element():
    s = json_for_script({"a": "</script><!-- \u2028 & >", "n": float("nan")})
    assert "<" not in s and ">" not in s and "\u2028" not in s
    assert json.loads(s) == {"a": "</script><!-- \u2028 & >", "n": None}


def _table(text):
    """Each summary row: its summary.json location and {metric: (data-value, shown text)}."""
    rows = []
    for path, key, body in re.findall(
            r'<tr data-cell="\d+" data-summary="([^"]*)" data-summary-key="([^"]*)">(.*?)</tr>', text, re.S):
        cells = {m: (json.loads(v) if v else None, re.sub(r"<[^>]+>", "", shown).split(" ")[0])
                 for m, v, shown in re.findall(
                     r'<td class="num" data-metric="(\w+)"(?: data-value="([^"]*)")?[^>]*>(.*?)</td>', body, re.S)}
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
    return {m.group(1): base64.b64decode(m.group(2)) for m in
            re.finditer(r'<img id="plot-([\w-]+)" class="plot" alt="[^"]*" src="data:image/png;base64,([^"]+)"', text)}


def test_plots_are_non_uniform_pngs(report):
    from PIL import Image

    plots = _plots(report.read_text())
    assert set(plots) == {"accuracy-vs-murgat", "coverage-vs-f1", "murgat-distribution",
                          "citation-problems", "hallucinated-audio", "stages"}
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
    assert dict(by["m2 / -"].citations) == {("visual", "out_of_range"): 1, ("visual", "supported"): 1}
    hostile = next(c for c in cells if c.model.startswith("m2</script>")).citations
    assert hostile[("visual", "malformed")] == 1 and hostile[("other", "malformed")] == 1
    assert not by["m1 / -"].heard_known  # a plain score folder has no generation rows
    gemma, qwen = by["tiny-gemma3 / cite"], by["tiny-qwen3-omni / cite"]
    rows = [json.loads(l) for l in (run_dir / "tiny-gemma3__cite" / "responses.jsonl").read_text().splitlines()]
    assert gemma.deaf_responses == len(rows) and gemma.hallucinated_audio == len(rows)  # one each
    # qwen hears audio, except on the video that has none
    assert qwen.deaf_responses == 1 and qwen.hallucinated_audio == 1
    assert by["tiny-gemma3 / base"].hallucinated_audio == 0


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
    rel = build([score_dir], tmp_path / "sub" / "rel.html", media_root=media_root, relative_media=True)
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
    assert result.responses == 10_000 and result.shown == 300 and text.count('<details class="response"') == 300
    assert "Showing 300 of 10000 responses" in text
    assert took < 60 and len(text) < 8_000_000, (took, len(text))


def test_cli_usage_errors_exit_2(tmp_path, score_dir):
    r = CliRunner().invoke(app, ["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 2 and "is not a folder" in " ".join(r.output.split())
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(app, ["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 2 and "neither" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["report", str(score_dir), "--out", str(tmp_path / "r.html"),
                                 "--media-root", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------------ the page, in Chromium


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class DevTools:
    """A headless Chromium and one page, over the DevTools protocol (websocket-client)."""

    def __init__(self, binary: str, profile: pathlib.Path):
        import websocket

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--mute-audio", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().count("\n") >= 1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start (exit {self.proc.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            targets = json.load(r)
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id, self.events = 0, []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for e in self.events[seen:]:
                if e.get("method") == method:
                    return e
            seen = len(self.events)
            self.ws.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except Exception:
                break
        raise TimeoutError(method)

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, path: pathlib.Path, full=False):
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=full)
        path.write_bytes(base64.b64decode(shot["data"]))

    def errors(self):
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(str(p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text"))
        return out

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


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


@pytest.mark.slow
def test_the_page_in_headless_chromium(report, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's `chromium`)")
    pytest.importorskip("websocket", reason="websocket-client is not installed (scripts/setup.sh installs it)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile = pathlib.Path(tempfile.mkdtemp(prefix="chromium-", dir=tmp_path))
    browser = DevTools(binary, profile)
    try:
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable")
        browser.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        browser.call("Page.navigate", url=report.as_uri())
        browser.wait_event("Page.loadEventFired")
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

        # Open the response that cites 0:05-0:07 and click that citation, as a user would.
        rect = browser.js("""(() => {
          const chip = [...document.querySelectorAll('.cite[data-start]')].find(c => c.dataset.start === '5.0');
          const box = chip.closest('details.response'); box.open = true;
          chip.scrollIntoView({block: 'center'});
          const r = chip.getBoundingClientRect();
          return {x: r.left + r.width / 2, y: r.top + r.height / 2};
        })()""")
        for kind in ("mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=rect["x"], y=rect["y"], button="left", clickCount=1)
        state = None
        for _ in range(100):
            state = browser.js("""(() => {
              const v = document.querySelector('.cite.active').closest('details.response').querySelector('video');
              return {t: v.currentTime, ready: v.readyState, err: v.error && v.error.code, paused: v.paused,
                      src: v.currentSrc, duration: v.duration};
            })()""")
            if state["ready"] >= 1 and state["t"] >= 5.0:
                break
            time.sleep(0.1)
        assert state["err"] is None, state
        assert state["ready"] >= 1 and abs(state["duration"] - 8.0) < 0.2, state
        assert 5.0 <= state["t"] <= 7.5, state
        browser.screenshot(ARTIFACTS / "3-citation-clicked.png")
        browser.screenshot(ARTIFACTS / "4-full-page.png", full=True)
        assert browser.errors() == []
        browser.js("console.error('probe')")  # the collector itself works
        browser.wait_event("Runtime.consoleAPICalled", timeout=5)
        assert len(browser.errors()) == 1
    finally:
        browser.close()
