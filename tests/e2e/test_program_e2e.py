"""Program-aided responders end to end on the real engines: every variant through `murgat run`
(generate, then score) with the random-weight Qwen3-Omni, and hand-written plans through
`murgat program run`."""

from __future__ import annotations

import json

import pytest
from support.cli import murgat, rows
from support.paths import ROOT, require_model

from murgat_local.text.citations import parse_citations

pytestmark = [pytest.mark.engine, pytest.mark.slow]

VARIANTS = (
    "logic-declarative",
    "logic-imperative",
    "narrative-declarative",
    "narrative-imperative",
)
NAMED = ("refused", "stopped", "failed", "could not be written", "ended without an answer")

LOGIC = """def main(video):
    notes = []
    for t in ["0:01-0:02", "0:04"]:
        notes.append(video.query(t, "What colour is the screen?", "visual"))
    notes.append(video.query("0:03-0:04", "Is a tone heard?", "audio"))
    notes.append(video.query("../../../etc/passwd", "What is there?", "visual"))
    return answer("What colour comes first?", notes, ["A", "B"])
"""
NARRATIVE = (
    '1. describe("0:00-0:01", "visual", "What colour is the screen?")\n'
    '2. describe("0:06", "audio", "Is a tone heard?")\n'
    '3. synthesize("Choose the option.")\n'
)


def executed_queries(trace: dict) -> list[tuple[str, str]]:
    return [
        (c["args"]["modality"], f"({c['args']['modality']}, {c['args']['time']})")
        for c in trace["calls"]
        if c["tool"] == "query" and c["error"] is None
    ]


# The engines run inside the `murgat` child process under test: nothing for the pool to share.
@pytest.fixture(scope="module")
def grid(tmp_path_factory, media_root):
    require_model("tiny-qwen3-omni")
    tmp = tmp_path_factory.mktemp("program")
    cfg = tmp / "run.toml"
    cfg.write_text(
        "batch_size = 16\n[generate]\nbatch_size = 16\n[generate.sampling]\nmax_tokens = 1200\n"
    )
    out = tmp / "run"
    args = [
        "run",
        ROOT / "samples" / "questions.jsonl",
        "--media-root",
        media_root,
        "--out",
        out,
        "--config",
        cfg,
        "--model",
        "tiny-qwen3-omni",
        "--judge",
        "tiny-qwen3-omni",
        "--limit",
        "2",
    ]
    for v in VARIANTS:
        args += ["--strategy", f"program:{v}"]
    return out, murgat(*args)


def test_every_variant_is_generated_and_scored_and_a_bad_plan_is_its_items_error(grid):
    out, proc = grid
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    summary = json.loads((out / "run_summary.json").read_text())
    assert len(summary["grid"]) == 4
    for v in VARIANTS:
        folder = out / f"tiny-qwen3-omni__program-{v}"
        gen, scores = rows(folder / "responses.jsonl"), rows(folder / "scores.jsonl")
        assert len(gen) == 2 and len(scores) == 2, v
        for r, s in zip(gen, scores):
            assert r["program"]["variant"] == v
            if (
                r["status"] == "error"
            ):  # random weights: the reason is named, and scoring reports it
                assert any(w in r["error"] for w in NAMED), r["error"]
                assert "internal" not in r["error"], r[
                    "error"
                ]  # a bug of ours is never the model's
                assert s["status"] == "error"
                continue
            trace = r["program"]["trace"]
            assert trace["status"] == "ok"
            queried = executed_queries(trace)
            cited = [(c.modality, c.raw) for c in parse_citations(r["model_generation"])]
            assert cited[: len(queried)] == queried and set(cited) <= set(queried)
            assert s["status"] == "ok"
    # a narrative plan is written under its grammar: even random weights write its shape
    for v in ("narrative-declarative", "narrative-imperative"):
        for r in rows(out / f"tiny-qwen3-omni__program-{v}" / "responses.jsonl"):
            first = "1. find(" if v.endswith("imperative") else "1. describe("
            assert r["program"]["raw"].startswith(first), r["program"]["raw"][:80]


def test_hand_written_plans_run_to_the_end_with_the_real_tools(tmp_path, media_root):
    require_model("tiny-qwen3-omni")
    (tmp_path / "plan.py").write_text(LOGIC)
    (tmp_path / "plan.txt").write_text(NARRATIVE)
    cache = tmp_path / "cache.sqlite"
    common = [
        "--video",
        "colors",
        "--media-root",
        media_root,
        "--model",
        "tiny-qwen3-omni",
        "--question",
        "What colour is first?",
        "--option",
        "red",
        "--option",
        "green",
        "--cache",
        cache,
    ]
    logic = murgat("program", "run", tmp_path / "plan.py", "--style", "logic", *common)
    assert logic.returncode == 0, logic.stderr[-3000:]
    report = json.loads(logic.stdout)
    trace = report["program"]["trace"]
    assert [c["tool"] for c in trace["calls"]] == ["query", "query", "query", "query", "answer"]
    bad = trace["calls"][3]
    # a "time" that is a path is a failed call with its reason, never something opened
    assert bad["error"] and "cannot be cut" in bad["error"] and bad["result"] is None
    touched = [
        ("visual", "(visual, 0:01-0:02)"),
        ("visual", "(visual, 0:04)"),
        ("audio", "(audio, 0:03-0:04)"),
    ]
    check_response(report, touched)

    narrative = murgat("program", "run", tmp_path / "plan.txt", "--style", "narrative", *common)
    assert narrative.returncode == 0, narrative.stderr[-3000:]
    report = json.loads(narrative.stdout)
    check_response(report, [("visual", "(visual, 0:00-0:01)"), ("audio", "(audio, 0:06)")])


def check_response(report: dict, touched: list) -> None:
    """The calls that succeeded are the plan's spans, in order, and the response cites exactly
    those (a random-weight model may fail a call: its output can miss the verdict's shape)."""
    queried = executed_queries(report["program"]["trace"])
    assert queried and queried == [t for t in touched if t in queried]
    if report["response"] is not None:
        cited = [(c.modality, c.raw) for c in parse_citations(report["response"])]
        assert cited[: len(queried)] == queried and set(cited) <= set(queried)
        assert all(c.valid for c in parse_citations(report["response"]))
        assert report["response"].splitlines()[-1].startswith("Answer: ")
    else:
        assert "without an answer" in report["error"]


def test_a_refused_plan_exits_1_with_its_reason_and_starts_no_model(tmp_path, media_root):
    (tmp_path / "evil.py").write_text("import os\nos.system('touch /tmp/owned')\n")
    proc = murgat(
        "program",
        "run",
        tmp_path / "evil.py",
        "--style",
        "logic",
        "--video",
        "colors",
        "--media-root",
        media_root,
        "--model",
        "tiny-qwen3-omni",
    )
    assert proc.returncode == 1
    assert "refused: line 1" in proc.stderr and "import" in proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == "refused" and report["program"]["trace"]["calls"] == []
    assert report["program"]["time"]["model_s"] == 0


def test_program_run_gives_a_transformers_engine_no_vllm_arguments(tmp_path, media_root):
    """`[engine_args]` are vLLM's: a transformers engine is not given them (before: TypeError,
    'unexpected keyword argument max_num_seqs', when the engine started)."""
    require_model("tiny-qwen3-omni")
    plan = tmp_path / "plan.txt"
    plan.write_text(
        '1. describe("0:00-0:01", "visual", "What colour is the screen?")\n'
        '2. synthesize("Choose the option.")\n'
    )
    cfg = tmp_path / "run.toml"
    cfg.write_text("[engine_args]\nmax_num_seqs = 4\nenforce_eager = true\n")
    r = murgat(
        "program", "run", plan, "--style", "narrative", "--video", "colors.mp4",
        "--media-root", media_root, "--model", "tiny-qwen3-omni",
        "--engine", "transformers", "--config", cfg, "--question", "What colour?",
        "--option", "red", "--option", "green",
    )  # fmt: skip
    assert "TypeError" not in r.stderr and "unexpected keyword" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["status"] == "ok", r.stdout
