"""`murgat report`'s page in a real headless Chromium (Debian's package, driven over the DevTools
protocol): no console errors, the table equals summary.json, the plots are decoded non-blank
images, and clicking a citation seeks the video. Screenshots are kept in
.local/test-artifacts/report/."""

from __future__ import annotations

import pathlib
import time

import pytest
from support.chromium import DevTools, _chromium
from support.paths import ROOT
from support.report_fixtures import ODD_VIDEO
from support.report_page import _expected

from murgat_local.reports.html import build

ARTIFACTS = ROOT / ".local" / "test-artifacts" / "report"


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
