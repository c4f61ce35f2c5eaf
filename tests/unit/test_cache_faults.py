"""Faults around the cache and the output folder: a result is never silently wrong."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess

import pytest
from support.cache_runs import TEXT, _records, _responses, _run
from support.fakes import OracleEngine
from typer.testing import CliRunner

from murgat_local.cli import app


def test_a_corrupt_cache_file_is_set_aside_never_read(tmp_path, media_root):
    responses = _responses(tmp_path)
    clean = _run(tmp_path, media_root, responses, tmp_path / "clean")
    cache = tmp_path / "c.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    engine = OracleEngine()
    result = _run(tmp_path, media_root, responses, tmp_path / "out", cache=cache, engine=engine)
    aside = result.summary.cache.set_aside
    assert aside and "corrupt" in aside and open(aside, "rb").read().startswith(b"this is not")
    assert engine.seen and _records(result) == _records(clean)


def test_a_cached_row_that_does_not_validate_is_judged_again(tmp_path, media_root):
    responses = _responses(tmp_path, 1)
    cache = tmp_path / "c.sqlite"
    first = _run(tmp_path, media_root, responses, tmp_path / "a", cache=cache)
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE verdicts SET verdict='{\"label\":\"MAYBE\"}' WHERE stage='entail'")
    engine = OracleEngine()
    again = _run(tmp_path, media_root, responses, tmp_path / "b", cache=cache, engine=engine)
    assert again.summary.cache.rejected_rows > 0 and engine.seen
    assert json.loads(_records(again))["murgat_s"] == json.loads(_records(first))["murgat_s"]


@contextlib.contextmanager
def _mounted(path, options):
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({proc.stderr.strip()}); needs root with CAP_SYS_ADMIN"
        )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_read_only_output_folder_is_a_usage_error_before_any_model(tmp_path, media_root):
    responses = _responses(tmp_path)
    cache = tmp_path / "keep.sqlite"
    _run(tmp_path, media_root, responses, tmp_path / "warm", cache=cache)
    before = cache.read_bytes()
    with _mounted(tmp_path / "ro", "ro,size=64k") as ro:
        r = CliRunner().invoke(
            app,
            [
                "score",
                str(responses),
                "--media-root",
                str(media_root),
                "--out",
                str(ro / "out"),
                "--judge",
                "tiny-qwen3-omni",
                "--cache",
                str(cache),
            ],
        )
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert str(ro / "out") in said and "read-only file system" in said
    assert cache.read_bytes() == before


def test_an_output_folder_that_fills_up_stops_the_run_with_exit_1_and_an_intact_cache(
    tmp_path, media_root
):
    # Every item fails before a judge is needed (no model starts), with long records.
    rows = [
        json.dumps({"id": f"x{i}", "video": f"missing-{'v' * 200}-{i}", "model_generation": TEXT})
        for i in range(400)
    ]
    responses = tmp_path / "many.jsonl"
    responses.write_text("\n".join(rows) + "\n")
    cache = tmp_path / "keep.sqlite"
    _run(tmp_path, media_root, _responses(tmp_path), tmp_path / "warm", cache=cache)
    with _mounted(tmp_path / "small", "size=64k") as small:
        r = CliRunner().invoke(
            app,
            [
                "score",
                str(responses),
                "--media-root",
                str(media_root),
                "--out",
                str(small / "out"),
                "--judge",
                "tiny-qwen3-omni",
                "--cache",
                str(cache),
            ],
        )
        assert not (small / "out" / "scores.jsonl").exists()
    assert r.exit_code == 1, r.output  # the message goes to the terminal, past the log redirection
    assert sqlite3.connect(cache).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
