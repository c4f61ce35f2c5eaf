"""`murgat report`: the HTML file from real score and run folders (OracleEngine judges, scripted
responders), checked as text and, in a real headless Chromium (Debian's package, driven over
the DevTools protocol), as a page: no console errors, the table equals summary.json, the plots
are decoded non-blank images, and clicking a citation seeks the video. Screenshots are kept in
.local/test-artifacts/report/."""

from __future__ import annotations

import base64
import html
import json
import os
import pathlib
import re
import shutil
import time
import urllib.parse
import urllib.request

from support.report_fixtures import ODD_VIDEO
from support.report_page import Page
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.reports.html import build, json_for_script

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
