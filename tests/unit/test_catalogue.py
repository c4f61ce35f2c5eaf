"""The catalogue of bad input (docs/security.md, "## Bad input"): every kind it lists is one case here.

One run of the real `Runner` (the deterministic `OracleEngine`, real media decoding) reads one
file that holds every per-line case, each followed by a good control item; each case then checks
its own record. Kinds that are about the whole file (empty, BOM, CRLF, a JSON list...) get a
small run each. The page's table and this module's cases are compared key by key, so the
documentation cannot drift from what is tested.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess

import pytest
from support.catalogue_cases import (
    LINE_CASES,
    TAIL,
    row,
)
from support.fakes import OracleEngine
from support.paths import ROOT

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner


class Oracle(OracleEngine):
    """The oracle, told each distinct media part once: its answer depends only on which colours
    and sounds are present, and 10,000 copies of one frame would cost it seconds."""

    def _answer(self, req):
        unique = tuple({id(m): m for m in req.media}.values())
        return super()._answer(dataclasses.replace(req, media=unique))


# ---------------------------------------------------------------- media


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory, media_root) -> dict:
    """A media root with the sample videos and every kind of bad media, and a folder beside it
    that no item may reach."""
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is missing: run scripts/setup.sh first")
    base = tmp_path_factory.mktemp("catalogue")
    root, outside = base / "media", base / "outside"
    root.mkdir()
    outside.mkdir()
    for name in ("colors.mp4", "silent.mp4", "truncated.mp4"):
        shutil.copy(media_root / name, root / name)
    shutil.copy(media_root / "colors.mp4", outside / "secret.mp4")
    _ffmpeg(
        "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:a", "aac", str(root / "tone.m4a")
    )
    _ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "color=c=red:size=3840x2160:rate=2:duration=1",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        str(root / "uhd.mp4"),
    )
    _ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "color=c=blue:size=320x240:rate=10:duration=3",
        "-f",
        "lavfi",
        "-i",
        "anullsrc=r=16000:cl=mono",
        "-t",
        "3",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-shortest",
        str(root / "hushed.mp4"),
    )
    (root / "empty.mp4").write_bytes(b"")
    (root / "notes.mp4").write_text("this is not a video\n")
    (root / "folder.mp4").mkdir()
    os.symlink("colors.mp4", root / "alias.mp4")  # stays inside
    os.symlink(outside / "secret.mp4", root / "leak.mp4")  # leaves the root
    return {"base": base, "root": root, "outside": outside}


# ---------------------------------------------------------------- the run


def _control(i: int) -> bytes:
    text = "The screen is green (visual, 0:01). A tone sounds (audio, 0:01-0:02)." + TAIL
    return json.dumps(row(f"ctl-{i}", text, answer="A")).encode()


def _score(env: dict, data: bytes, name: str) -> tuple[object, list[dict], Oracle]:
    folder = env["base"] / name
    folder.mkdir()
    path = folder / "responses.jsonl"
    path.write_bytes(data)
    engine = Oracle()
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        env["root"],
        folder / "out",
        engines={"oracle": engine},
        summary=RunSummary,
    )
    try:
        result = runner.run(path)
    finally:
        runner.close()
    return (
        result,
        [json.loads(line) for line in result.records_path.read_text(encoding="utf-8").splitlines()],
        engine,
    )


@pytest.fixture(scope="module")
def run(env) -> dict:
    """Every line case, each followed by a control, scored in one run; records by line number."""
    lines: list[bytes] = []
    where: dict[str, int] = {}
    for i, case in enumerate(LINE_CASES, start=1):
        lines.append(case.text(env))
        where[case.key] = len(lines)
        lines.append(_control(i))
    result, records, engine = _score(env, b"\n".join(lines) + b"\n", "lines")
    by_line = {int(re.match(r"line (\d+)", r["source"]).group(1)): r for r in records}
    return {
        "result": result,
        "records": records,
        "by_line": by_line,
        "where": where,
        "lines": lines,
        "engine": engine,
    }


@pytest.mark.parametrize("case", LINE_CASES, ids=lambda c: c.key)
def test_line_case(case, run):
    rec = run["by_line"].get(run["where"][case.key])
    if case.expect is None:
        assert rec is None
        return
    assert rec is not None, f"no record for {case.key}"
    case.expect(rec, run)


def test_every_line_has_a_record_and_no_bad_item_disturbs_its_neighbours(run):
    blank = {run["where"][c.key] for c in LINE_CASES if c.expect is None}
    assert sorted(run["by_line"]) == [n for n in range(1, len(run["lines"]) + 1) if n not in blank]
    assert [r["index"] for r in run["records"]] == list(range(len(run["records"])))
    for i, case in enumerate(LINE_CASES, start=1):
        ctl = run["by_line"][run["where"][case.key] + 1]
        assert (
            ctl["id"] == f"ctl-{i}"
            and ctl["status"] == "ok"
            and ctl["murgat_s"] == 1.0
            and ctl["correct"] is True
        ), ctl
    errors = [r for r in run["records"] if r["status"] == "error"]
    assert run["result"].exit_code == 1 and len(run["result"].summary.errors_list) == len(errors)
    assert run["result"].summary.judge_calls.failed == 0


# ---------------------------------------------------------------- whole-file kinds


def _rows(*ids: str) -> list[str]:
    return [json.dumps(row(i)) for i in ids]


def _expect_ok(*ids: str, sources: tuple[str, ...] = ()):
    def check(result, records):
        assert [(r["id"], r["status"]) for r in records] == [(i, "ok") for i in ids], records
        if sources:
            assert tuple(r["source"] for r in records) == sources
        assert result.exit_code == 0

    return check


def _empty(result, records):
    assert records == [] and result.exit_code == 1
    assert result.summary.failure == "the input holds no responses"


def _one_error(fragment: str):
    def check(result, records):
        (rec,) = records
        assert rec["status"] == "error" and fragment in rec["error"], rec
        assert result.exit_code == 1

    return check


def _list(*ids: str) -> str:
    return "[" + ",\n".join(_rows(*ids)) + "]"


FILE_CASES = {
    "empty-file": (b"", _empty),
    "bom": (("\ufeff" + "\n".join(_rows("a", "b")) + "\n").encode(), _expect_ok("a", "b")),
    "bom-json-list": (
        ("\ufeff" + _list("a", "b")).encode(),
        _expect_ok("a", "b", sources=("item 0", "item 1")),
    ),
    "crlf": (
        ("\r\n".join(_rows("a", "b")) + "\r\n").encode(),
        _expect_ok("a", "b", sources=("line 1", "line 2")),
    ),
    "json-list": (_list("a", "b").encode(), _expect_ok("a", "b", sources=("item 0", "item 1"))),
    "json-list-malformed": (
        _list("a", "b")[:-1].encode(),
        _one_error("the JSON list does not parse: Expecting ',' delimiter"),
    ),
    "utf16-file": (
        ("\n".join(_rows("a", "b")) + "\n").encode("utf-16"),
        _one_error(
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark); the input must be UTF-8"
        ),
    ),
}


@pytest.mark.parametrize("key", sorted(FILE_CASES))
def test_file_case(key, env):
    data, check = FILE_CASES[key]
    result, records, _ = _score(env, data, key)
    check(result, records)


# ---------------------------------------------------------------- the docs page's table


def _readme_keys() -> list[str]:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    section = text.split("\n## Bad input\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.M)


def test_the_readme_lists_exactly_the_tested_kinds():
    keys = _readme_keys()
    tested = [c.key for c in LINE_CASES] + list(FILE_CASES)
    assert len(keys) == len(set(keys)), "a key is listed twice in docs/security.md"
    assert len(tested) == len(set(tested)), "a key is tested twice"
    assert set(keys) - set(tested) == set(), "docs/security.md rows without a test case"
    assert set(tested) - set(keys) == set(), "test cases without a docs/security.md row"
    assert len(keys) >= 30


def test_a_zero_byte_video_is_reported_as_empty(env):
    from murgat_local.media.segments import SegmentCutter
    from murgat_local.media.source import MediaError

    with pytest.raises(MediaError, match=r"is empty \(0 bytes\)"):
        SegmentCutter(env["root"]).source("empty")
