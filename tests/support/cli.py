"""`murgat` as a user runs it: the real command in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import ROOT

# The sample's judges: the tiny Qwen3-Omni for attribution, SmolLM2 for the text stages.
JUDGES = [
    "--judge",
    "tiny-qwen3-omni",
    "--verifier",
    "smollm2-135m-instruct",
    "--decomposer",
    "smollm2-135m-instruct",
]


def murgat(*args, **kw):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        **kw,
    )


def rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]
