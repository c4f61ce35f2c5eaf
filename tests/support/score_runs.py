"""What the `murgat score` end-to-end run (tests/e2e/test_score_e2e.py) uses: its judges, the bad
input lines and dataset categories added to the sample responses, `murgat` in a child process and
its score arguments, the audit hook that logs process starts and socket connects, and reading
the records."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.cli import JUDGES
from support.paths import ROOT

BAD_LINES = [
    '{"id": "broken", "video": "colors", "model_generation": ',
    json.dumps(
        {
            "id": "no-video-file",
            "video": "missing_clip",
            "model_generation": "A red screen (visual, 0:00).",
        }
    ),
    json.dumps(
        {
            "id": "escape",
            "video": "../../../../etc/hostname",
            "model_generation": "A red screen (visual, 0:00).",
        }
    ),
    json.dumps(
        {
            "id": "truncated",
            "video": "truncated",
            "model_generation": "A red screen (visual, 0:00).",
        }
    ),
    json.dumps({"id": "colors-correct", "video": "colors", "model_generation": "duplicate id"}),
    json.dumps({"id": "empty", "video": "colors", "model_generation": ""}),
]

# The dataset's categories, as `murgat generate` writes them into a response row (see --group-by).
CATEGORIES = {
    "colors-correct": {
        "benchmark": "sample",
        "categories": {"domain": "colours", "audio_class": ["tone"]},
    },
    "colors-wrong-time": {
        "benchmark": "sample",
        "categories": {"domain": "colours", "audio_class": ["tone", "silence"]},
    },
    "speech": {"categories": {"domain": "speech", "audio_class": ["speech"]}},
    "late-audio": {"categories": {"audio_class": []}},
}

GROUP_BY = ("domain", "audio_class", "benchmark", "model")


def _with_categories(line: str) -> str:
    row = json.loads(line)
    return json.dumps({**row, **CATEGORIES.get(row["id"], {})})


def murgat(*args, env_extra=None, **kw):
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        **kw,
    )


def score_args(responses, media_root, out, *extra):
    return ["score", responses, "--media-root", media_root, "--out", out, *JUDGES, *extra]


# Installed in every Python process of the audited run (the CLI and vLLM's engine processes,
# which inherit PYTHONPATH): logs each process start and every socket connect.
AUDIT = """
import os, sys
_log = os.environ.get("MURGAT_AUDIT_LOG")
if _log:
    with open(_log, "a") as f:
        f.write(f"start {os.getpid()} {' '.join(sys.argv)[:80]!r}\\n")
    def _hook(event, args):
        if event == "socket.connect":
            with open(_log, "a") as f:
                f.write(f"connect {os.getpid()} {int(args[0].family)} {args[1]!r}\\n")
    sys.addaudithook(_hook)
"""


def records(out):
    return [json.loads(l) for l in (out / "scores.jsonl").read_text().splitlines()]
