"""`murgat score` end to end: the real CLI, real vLLM engines, real media, real SQLite.

The verifier and decomposer are SmolLM2-135M (a real, weak text model, so some sentences are
judged verifiable and every stage runs); the entailer is the random-weight Qwen3-Omni thinker,
which takes the cut frames and waveforms. Their verdicts mean nothing; the plumbing is real.
The tests share the first run this module's fixture makes (they stay in one module so that it
runs once); its inputs, command and audit hook: tests/support/score_runs.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys

import pytest
from support.paths import ROOT, require_model
from support.resume_checks import (
    cache_rows,
    check_verdicts,
    first_rows,
    group_survivors,
    structure,
)
from support.score_runs import (
    AUDIT,
    BAD_LINES,
    CATEGORIES,
    GROUP_BY,
    _with_categories,
    murgat,
    records,
    score_args,
)

pytestmark = [pytest.mark.engine, pytest.mark.slow]


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    for m in ("tiny-qwen3-omni", "smollm2-135m-instruct", "tiny-gemma3"):
        require_model(m)
    lines = [
        _with_categories(l) for l in (ROOT / "samples" / "responses.jsonl").read_text().splitlines()
    ]
    path = tmp_path_factory.mktemp("in") / "responses.jsonl"
    path.write_text("\n".join(lines[:3] + BAD_LINES + lines[3:]) + "\n")
    return path


@pytest.fixture(scope="module")
def small_batches(tmp_path_factory):
    p = tmp_path_factory.mktemp("cfg") / "run.toml"
    # Small chunks and batches so a kill lands mid-run; no prefix caching, so a resumed run's
    # first batches are computed exactly as the uninterrupted run computed them.
    p.write_text("chunk_size = 4\nbatch_size = 4\n[engine_args]\nenable_prefix_caching = false\n")
    return p


# The engines run inside the `murgat` child process under test: nothing for the pool to share.
@pytest.fixture(scope="module")
def first_run(responses, media_root, small_batches, tmp_path_factory):
    out = tmp_path_factory.mktemp("run1")
    hooks = tmp_path_factory.mktemp("audit")
    (hooks / "sitecustomize.py").write_text(AUDIT)
    audit = hooks / "connects.log"
    groups = [a for f in GROUP_BY for a in ("--group-by", f)]
    proc = murgat(
        *score_args(responses, media_root, out, "--config", small_batches, *groups),
        env_extra={"PYTHONPATH": str(hooks), "MURGAT_AUDIT_LOG": str(audit)},
    )
    return out, proc, audit


def test_every_stage_runs_and_bad_items_are_reported(first_run, responses):
    out, proc, _ = first_run
    assert proc.returncode == 1, proc.stderr[-3000:]
    recs = records(out)
    n_lines = len(responses.read_text().splitlines())
    assert len(recs) == n_lines and [r["index"] for r in recs] == list(range(n_lines))
    by_id = {r["id"]: r for r in recs if r["id"]}
    assert "line 4" in recs[3]["error"]
    assert "not found" in by_id["no-video-file"]["error"]
    assert "escapes the media root" in by_id["escape"]["error"]
    assert "cannot read" in by_id["truncated"]["error"]
    assert "duplicate id" in recs[7]["error"]
    assert by_id["empty"]["error"].startswith("field 'model_generation' is")
    ok = [r for r in recs if r["status"] == "ok"]
    assert len(ok) == 6
    silent = by_id["silent-audio-claim"]["trace"]["sentences"][0]["citations"][0]
    assert silent["usable"] is False and "no audio track" in silent["issue"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == 6 and len(summary["errors_list"]) == 6
    for stage in ("decontext", "verifiable", "decompose", "entail"):
        assert summary["stages"][stage]["model_calls"] > 0, stage
    assert summary["unparsed_verdicts"]["entail"] == 0 and summary["segments_decoded"] > 0
    for r in ok:  # every number is there or explained
        assert r["murgat_s"] is not None or r["note"]
    assert "MURGAT-S" in proc.stdout
    # Quiet by default: the engines' logs are in OUT/engine.log, not around the table.
    assert "INFO" not in proc.stdout + proc.stderr and "WARNING" not in proc.stdout + proc.stderr
    assert "vLLM" in (out / "engine.log").read_text() or "vllm" in (out / "engine.log").read_text()
    # Provenance names the real engines' identities and the software that produced the numbers.
    prov = summary["provenance"]
    assert prov["versions"]["vllm"] and prov["versions"]["torch"]
    assert (
        prov["judges"]["entail"]["detail"]["weights"]
        and prov["judges"]["entail"]["model"] == "tiny-qwen3-omni"
    )


def test_group_by_gives_each_groups_means_and_intervals(first_run):
    """The run above was given --group-by: each group's numbers are those of its records."""
    from statistics import mean

    from murgat_local.metrics.intervals import IntervalValues, add_intervals
    from murgat_local.metrics.scores import summarize
    from murgat_local.results import ScoreRecord

    out, proc, _ = first_run
    summary = json.loads((out / "summary.json").read_text())
    recs = records(out)
    by_id = {}
    for r in recs:  # the first of an id: a later one is the duplicate's error
        by_id.setdefault(r["id"], r)
    assert (
        by_id["speech"]["categories"] == CATEGORIES["speech"]["categories"]
    )  # carried from the row
    assert by_id["colors-correct"]["benchmark"] == "sample"
    hand = {
        "domain": {"colours": ["colors-correct", "colors-wrong-time"], "speech": ["speech"]},
        "audio_class": {
            "tone": ["colors-correct", "colors-wrong-time"],
            "silence": ["colors-wrong-time"],
            "speech": ["speech"],
        },
        "benchmark": {"sample": ["colors-correct", "colors-wrong-time"]},
    }
    for field, groups in hand.items():
        for value, ids in groups.items():
            g = summary["by_group"][field][value]
            assert g["responses"] == len(ids)
            values = [by_id[i]["murgat_s"] for i in ids if by_id[i]["murgat_s"] is not None]
            assert g["murgat_s"] == (mean(values) if values else None), (field, value)
    none = summary["by_group"]["domain"][
        "(none)"
    ]  # the rows without a domain, the unreadable lines too
    assert none["responses"] == len(recs) - 3 and none["errors"] == summary["errors"]
    assert set(summary["by_group"]["model"]) == {"sample-model-a", "sample-model-b", "(none)"}
    typed = [ScoreRecord.model_validate(r) for r in recs]
    again = summarize(typed, GROUP_BY)
    add_intervals(again, IntervalValues.of(typed, GROUP_BY), n_resamples=summary["ci"]["resamples"])
    assert json.loads(json.dumps(again["by_group"])) == summary["by_group"]
    assert "By domain" in proc.stdout


def test_rerun_makes_zero_model_calls_and_writes_the_same_scores(
    first_run, responses, media_root, small_batches
):
    out, _, _ = first_run
    before = (out / "scores.jsonl").read_bytes()
    proc = murgat(*score_args(responses, media_root, out, "--config", small_batches))
    assert proc.returncode == 1
    summary = json.loads((out / "summary.json").read_text())
    assert all(s["model_calls"] == 0 for s in summary["stages"].values())
    assert not any(e["started"] for e in summary["engines"].values())
    assert summary["segments_decoded"] == 0
    assert (out / "scores.jsonl").read_bytes() == before


def test_dry_run_counts_cached_calls(first_run, responses, media_root, small_batches):
    out, _, _ = first_run
    # The same engine arguments as the run (they are part of the judges' identity).
    proc = murgat(*score_args(responses, media_root, out, "--config", small_batches, "--dry-run"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    plan = json.loads(proc.stdout)
    assert plan["complete"] is True
    assert all(
        plan[s]["to_run"] == 0 and plan[s]["calls"] == plan[s]["cached"]
        for s in ("decontext", "verifiable", "decompose", "entail")
    )
    assert plan["entail"]["calls"] > 0


def test_dry_run_estimates_hours_from_a_calibration_on_the_real_engines(
    responses, media_root, small_batches, tmp_path
):
    out = tmp_path / "estimate"
    # --verbose: engine logs on; they belong on stderr, stdout is the plan alone (pipeable to jq).
    proc = murgat(
        *score_args(
            responses,
            media_root,
            out,
            "--config",
            small_batches,
            "--dry-run",
            "--calibrate",
            "2",
            "--verbose",
        )
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    plan = json.loads(proc.stdout)
    assert "INFO" in proc.stderr  # the engine's logs were shown, on stderr
    est = plan["estimate"]
    assert est["calibrated_on"] == 2 and est["responses"] == len(responses.read_text().splitlines())
    timed = [s for s in est["stages"].values() if s["seconds_per_call"]]
    assert timed and all(s["seconds_per_call"] > 0 for s in timed)
    assert est["hours"] is None or est["hours"] > 0
    assert not (out / "scores.jsonl").exists()  # a dry run writes no results


def test_swapping_the_entailer_reruns_only_attribution(
    first_run, responses, media_root, small_batches, tmp_path
):
    out, _, _ = first_run
    swapped = tmp_path / "swapped"
    shutil.copytree(out, swapped)
    # Gemma-3 takes no audio: alone it is refused at start, naming the flag that routes audio.
    alone = murgat(
        *score_args(
            responses, media_root, swapped, "--config", small_batches, "--entailer", "tiny-gemma3"
        )
    )
    assert (
        alone.returncode == 2
        and "cannot take audio" in alone.stderr
        and "--entailer-audio" in alone.stderr
    )
    # Audio-only facts routed to the Qwen thinker, which judged them in the first run: cached.
    proc = murgat(
        *score_args(
            responses,
            media_root,
            swapped,
            "--config",
            small_batches,
            "--entailer",
            "tiny-gemma3",
            "--entailer-audio",
            "tiny-qwen3-omni",
        )
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    summary = json.loads((swapped / "summary.json").read_text())
    s = summary["stages"]
    assert (
        s["decontext"]["model_calls"]
        == s["verifiable"]["model_calls"]
        == s["decompose"]["model_calls"]
        == 0
    )
    routes = s["entail"]["routes"]
    assert (
        summary["entail_routes"] == {"audio": "tiny-qwen3-omni"}
        and routes["audio"]["model"] == "tiny-qwen3-omni"
    )
    assert (
        routes["audio"]["model_calls"] == 0
        and routes["audio"]["cache_hits"] == routes["audio"]["unique"] > 0
    )
    assert routes["mixed"]["model"] == "tiny-gemma3" and routes["mixed"]["model_calls"] > 0
    # every call reached a judge that takes its media (the sample has no fact citing both)
    assert s["entail"]["errors"] == 0


def test_rescore_recomputes_the_recorded_scores(first_run, tmp_path):
    out, _, _ = first_run
    proc = murgat("rescore", out / "scores.jsonl", "--out", tmp_path / "re.jsonl")
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = [json.loads(l) for l in (tmp_path / "re.jsonl").read_text().splitlines()]
    for a, b in zip(records(out), again):
        for m in ("coverage", "precision", "recall", "f1", "murgat_s"):
            assert a[m] == b[m], (a["id"], m)


def test_a_run_stopped_by_sigterm_then_killed_resumes_to_the_same_scores(
    first_run, responses, media_root, small_batches, tmp_path
):
    """One chain, so the engines start three times rather than four: the run is stopped by
    SIGTERM (a clean stop), its resumption is SIGKILLed mid-stage, and the same command then
    finishes with the uninterrupted run's records; no verdict cached along the way changes."""
    out1, _, _ = first_run
    out = tmp_path / "stopped"
    env = dict(os.environ)
    args = [
        sys.executable,
        "-m",
        "murgat_local.cli",
        *map(str, score_args(responses, media_root, out, "--config", small_batches)),
    ]
    db = out / "verdicts.sqlite"

    # 1. SIGTERM: a clean stop, engines gone, partial results kept, the cache intact.
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    sent = first_rows(proc, db) is not None
    if sent:
        proc.send_signal(signal.SIGTERM)
    assert sent, "the run finished before it could be stopped"
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr[-2000:]
    assert "interrupted" in stderr and "SIGTERM" in stderr
    # the engines' processes are gone too (the run waits for them; Python's resource tracker
    # ends just after the run, so the group is given a few seconds to empty)
    assert group_survivors(proc.pid) == []
    assert not (out / "scores.jsonl").exists() and (out / "scores.jsonl.partial").exists()
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    at_stop = cache_rows(db)

    # 2. The same command again, SIGKILLed (process group and engines) once it has judged new
    #    verifiability claims: nothing is written but the cache.
    verifiable = sum(row[0] == "verifiable" for row in at_stop.values())
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    killed_at = first_rows(proc, db, "verifiable", more_than=verifiable)
    if killed_at is not None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert killed_at is not None, "the resumed run finished before it could be killed"
    assert not (out / "scores.jsonl").exists()
    at_kill = cache_rows(db)
    assert set(at_stop) < set(at_kill)  # the killed run added verdicts and kept the earlier ones

    # 3. The same command finishes: the uninterrupted run's records.
    resumed = murgat(*score_args(responses, media_root, out, "--config", small_batches))
    assert resumed.returncode == 1, resumed.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    s = summary["stages"]
    assert (
        s["decontext"]["cache_hits"] > 0 and s["verifiable"]["cache_hits"] >= killed_at
    )  # kept, not redone
    after = cache_rows(db)
    # Verdicts cached before the first stop were computed as the uninterrupted run computed them;
    # those the killed resumption computed (on a fresh engine's history) come back unchanged.
    check_verdicts(at_stop, cache_rows(out1 / "verdicts.sqlite"), after)
    assert all(after[k] == row for k, row in at_kill.items())
    assert structure(out / "scores.jsonl") == structure(out1 / "scores.jsonl")


def test_nothing_connects_anywhere_but_loopback(first_run):
    """A whole `murgat score` with the vLLM engine and every stage, audited in every Python
    process (sys.addaudithook on socket.connect): only loopback and local sockets."""
    import ast
    import ipaddress
    import socket

    _, proc, audit = first_run
    lines = audit.read_text().splitlines()
    starts = [l for l in lines if l.startswith("start ")]
    assert len(starts) >= 2, lines  # the CLI and at least one engine process were audited
    for line in (l for l in lines if l.startswith("connect ")):
        _, _, family, address = line.split(" ", 3)
        if int(family) == socket.AF_UNIX:
            continue
        host = ast.literal_eval(address)[0]
        assert ipaddress.ip_address(host).is_loopback, line


def test_every_file_the_run_writes_is_of_its_schema(first_run):
    """Each line of scores.jsonl and summary.json carry the current `schema_version`, read back
    through the one reader and validate against the JSON Schema `murgat schema` prints."""
    jsonschema = pytest.importorskip("jsonschema")
    from murgat_local.results import CURRENT, SCHEMAS, ReadError, read_score_records, read_summary

    out, _, _ = first_run
    recs = records(out)
    assert recs and all(r["schema_version"] == CURRENT for r in recs)
    read = list(read_score_records(out / "scores.jsonl"))
    assert not [r for r in read if isinstance(r, ReadError)]
    assert [r.dump() for r in read] == recs  # read and written back: the same records
    for r in recs:
        jsonschema.validate(r, SCHEMAS["score-record"].model_json_schema())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == CURRENT
    assert not isinstance(read_summary(out / "summary.json"), ReadError)
    jsonschema.validate(summary, SCHEMAS["summary"].model_json_schema())
