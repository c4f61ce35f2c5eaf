"""The `murgat report` inputs and page shared by the report tests (a pytest plugin:
tests/conftest.py loads it; its fixtures are built once per session)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from support.fakes import OracleEngine

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
        summary=RunSummary,
    )
    try:
        return runner.run(p)
    finally:
        runner.close()


@pytest.fixture(scope="session")
def score_dir(tmp_path_factory, media_root):
    out = tmp_path_factory.mktemp("report") / "score"
    _score(media_root, ROWS, out)
    return out


@pytest.fixture(scope="session")
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
            **gen.summary.cells[label].model_dump(exclude_unset=True),
            "murgat_s": scored.summary.murgat_s,
            "scores": str(scored.records_path),
        }
    (tmp / "grid" / "run_summary.json").write_text(json.dumps({"grid": grid}, default=str))
    return tmp / "grid"


@pytest.fixture(scope="session")
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


ODD_VIDEO = "https:host/a #1?b%41"


@pytest.fixture(scope="session")
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
