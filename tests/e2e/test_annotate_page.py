"""The labeling page in Debian's headless Chromium, over the DevTools protocol (the helper of
tests/unit/test_report.py): the sample, plus one hostile response, labelled end to end from the
keyboard, with the server SIGKILLed mid-way and started again with the same arguments; the
player's state for visual, point and audio citations; undo; editing facts; the guidelines and
agreement views; no console error; the labels equal those of the same answers given in
process, and score under `--judge human:`. Screenshots are kept in .local/test-artifacts/annotate/."""

from __future__ import annotations

import json
import pathlib
import tempfile
import time

import pytest
from support.annotate_checks import Server, scripted
from support.chromium import DevTools, _chromium
from support.paths import ROOT

from murgat_local.annotate import Session, Store, load_source
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.text.labels import read_labels

ARTIFACTS = ROOT / ".local" / "test-artifacts" / "annotate"
SAMPLE = ROOT / "samples" / "responses.jsonl"
HOSTILE = {
    "id": "<b>hostile</b>",
    "video": "colors",
    "question": "</script><script>alert(3)</script>",
    "model_generation": "The screen is <b>red</b> <img src=x onerror=alert(1)> (visual, 0:00).",
}
KEYS = {
    "y": ("KeyY", 89),
    "n": ("KeyN", 78),
    "z": ("KeyZ", 90),
    "e": ("KeyE", 69),
    "a": ("KeyA", 65),
    "g": ("KeyG", 71),
    "Enter": ("Enter", 13),
}

# What a person reads on the page, in the shape the scripted annotator takes.
SHOWN = """(() => {
  const b = document.body.dataset;
  const chips = [...document.querySelectorAll('#chips button')];
  const fact = document.getElementById('fact').textContent;
  return {key: b.key, state: b.state, kind: b.kind,
          sentence_text: document.getElementById('sentence').textContent,
          fact_text: fact.startsWith('Fact: ') ? fact.slice(6) : null,
          citation: b.kind === 'precise' ? chips.findIndex(c => c.classList.contains('active')) : null,
          proposal: document.getElementById('facts').value.split('\\n').filter(f => f.trim())};
})()"""
PLAYER = """(() => {
  const v = document.getElementById('player');
  return {t: v.currentTime, paused: v.paused, muted: v.muted, ready: v.readyState, err: v.error && v.error.code,
          sound_only: !document.getElementById('audio-only').hidden, info: document.getElementById('span-info').textContent};
})()"""


def press(browser, key):
    code, vk = KEYS[key]
    common = {"key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
    browser.call(
        "Input.dispatchKeyEvent", type="keyDown", text="\r" if key == "Enter" else key, **common
    )
    browser.call("Input.dispatchKeyEvent", type="keyUp", **common)


def until(browser, expression, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.js(expression)
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(expression)


def shown(browser):
    s = browser.js(SHOWN)
    return {**s, "response": {"sentences": [s["sentence_text"]]}, "sentence": 0}


def answer_by_key(browser, q, answer):
    press(browser, "Enter" if isinstance(answer, list) else ("y" if answer else "n"))
    until(
        browser,
        f"document.body.dataset.state !== 'busy' && document.body.dataset.key !== {json.dumps(q['key'])}",
    )


def open_page(browser, url):
    """Navigate and wait for the first question; the events before it are dropped (keep their
    errors first): `wait_event` reads every event it holds."""
    browser.events.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_event("Page.loadEventFired")
    until(browser, "document.body && ['question', 'done'].includes(document.body.dataset.state)")


def check_player(browser, q, checked):
    """The player's state for the question's citation, once per kind of citation."""
    info = browser.js("document.getElementById('span-info').textContent")
    kind = (
        "still"
        if "still frame" in info
        else "sound"
        if "sound only" in info
        else "muted"
        if "muted" in info
        else None
    )
    if kind is None or kind in checked:
        return
    state = until(browser, f"(() => {{ const s = {PLAYER}; return s.ready >= 1 && s; }})()")
    if kind == "still":
        assert state["paused"] and state["muted"] and not state["sound_only"], state
    elif kind == "muted":  # a visual range loops, muted
        state = until(
            browser, f"(() => {{ const s = {PLAYER}; return !s.paused && s.t > 0.2 && s; }})()"
        )
        assert state["muted"] and not state["sound_only"], state
    else:  # audio: the picture hidden, the sound on, the span's start sought
        assert not state["muted"] and state["sound_only"], state
    assert state["err"] is None
    checked[kind] = state
    browser.screenshot(ARTIFACTS / f"player-{kind}.png")


@pytest.mark.slow
def test_label_the_sample_from_the_keyboard_with_a_sigkill(tmp_path, media_root):
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's `chromium`)")
    pytest.importorskip(
        "websocket", reason="websocket-client is not installed (scripts/setup.sh installs it)"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "responses.jsonl"
    source.write_text(SAMPLE.read_text() + json.dumps(HOSTILE) + "\n")
    labels = tmp_path / "labels.jsonl"
    args = [
        source,
        "--media-root",
        media_root,
        "--labels",
        labels,
        "--annotator",
        "ann",
        "--port",
        "0",
    ]
    server = Server(args)
    browser = DevTools(binary, pathlib.Path(tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)))
    asked, checked, errors, undone = [], {}, [], False
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
        open_page(browser, server.url)
        browser.screenshot(ARTIFACTS / "1-first-question.png")
        killed = False
        while browser.js("document.body.dataset.state") != "done":
            q = shown(browser)
            if q["key"].startswith(HOSTILE["id"] + "#"):
                break  # the hostile response is last: labelled below, by hand
            check_player(browser, q, checked)
            if (
                len(asked) >= 5 and not undone and q["kind"] != "facts"
            ):  # undo: the same question comes back
                undone = True
                answer_by_key(browser, q, not scripted(q))
                press(browser, "z")
                until(
                    browser,
                    f"document.body.dataset.key === {json.dumps(q['key'])} && "
                    "document.body.dataset.state === 'question'",
                )
            answer_by_key(browser, q, scripted(q))
            asked.append(q["key"])
            if len(asked) == 15 and not killed:
                browser.screenshot(ARTIFACTS / "2-before-sigkill.png")
                errors += browser.errors()
                pending = browser.js("document.body.dataset.key")
                server.kill()
                killed = True
                server = Server(args)  # the same arguments; a new port (--port 0)
                open_page(browser, server.url)
                assert (
                    browser.js("document.body.dataset.key") == pending
                )  # resumed where it stopped
                assert server.call("/api/progress")[1]["answered"] == 15
        assert killed and undone and len(asked) == len(set(asked))
        assert checked.keys() == {"still", "muted", "sound"}

        # The hostile response: its text is text, and its facts are typed by hand.
        assert browser.js("document.querySelectorAll('img, b, #sentence *').length") == 0
        assert "<img src=x onerror=alert(1)>" in browser.js(
            "document.getElementById('sentence').textContent"
        )
        assert "</script>" in browser.js("document.getElementById('question-text').textContent")
        browser.screenshot(ARTIFACTS / "3-hostile-text.png")
        press(browser, "y")  # verifiable
        until(
            browser,
            "document.body.dataset.kind === 'facts' && document.body.dataset.state === 'question'",
        )
        press(browser, "e")
        browser.js("document.getElementById('facts').select()")
        browser.call("Input.insertText", text="The screen is red.\nThe screen shows a <b> tag.")
        browser.screenshot(ARTIFACTS / "4-editing-facts.png")
        q = shown(browser)
        press(browser, "Enter")
        until(
            browser,
            f"document.body.dataset.key !== {json.dumps(q['key'])} && document.body.dataset.state !== 'busy'",
        )
        for answer in (
            True,
            False,
        ):  # entailed: the first fact yes (one citation: needed), the second no
            answer_by_key(browser, shown(browser), answer)
        until(browser, "document.body.dataset.state === 'done'")
        browser.screenshot(ARTIFACTS / "5-done.png")
        press(browser, "g")
        until(browser, "!document.getElementById('guide').hidden")
        press(browser, "a")
        until(
            browser,
            "document.querySelector('#agreement-body p') && "
            "document.querySelector('#agreement-body p').textContent.startsWith('Annotators')",
        )
        browser.screenshot(ARTIFACTS / "6-guidelines-and-agreement.png", full=True)
        errors += browser.errors()
        assert errors == []
    finally:
        browser.close()
        code = server.stop()
    assert code == 0

    got, problems = read_labels(labels)
    assert problems == [] and len(got) == 7
    assert [(f.text, f.entailed, f.precise) for f in got[HOSTILE["id"]].sentences[0].facts] == [
        ("The screen is red.", True, (True,)),
        ("The screen shows a <b> tag.", False, None),
    ]
    # The same answers given in process give the same labels.
    ref = Session(
        load_source(SAMPLE, media_root),
        Store(tmp_path / "ref.sqlite"),
        "ann",
        labels=tmp_path / "ref.jsonl",
    )
    while not (n := ref.next())["done"]:
        ref.answer(n["question"]["key"], scripted(n["question"]))
    ref.close()
    mine = [json.loads(l) for l in labels.read_text().splitlines()][:6]
    assert mine == [json.loads(l) for l in (tmp_path / "ref.jsonl").read_text().splitlines()]
    runner = Runner(
        RunConfig(judge=f"human:{labels}"), media_root, tmp_path / "human", summary=RunSummary
    )
    try:
        result = runner.run(source)
    finally:
        runner.close()
    statuses = [json.loads(l)["status"] for l in result.records_path.read_text().splitlines()]
    assert statuses == ["ok"] * 7 and result.summary.judge_calls.failed == 0
