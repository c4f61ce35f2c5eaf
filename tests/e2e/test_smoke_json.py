"""`murgat smoke --json`: stdout is only the JSON list, one object per probe, logs elsewhere
(even with --verbose, which sends the engines' logs to stderr). One cheap model on transformers."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from support.paths import ROOT, require_model

from murgat_local.engines.reach import prompt_print

FIELDS = {"model", "engine", "modality", "verdict", "prompt_tokens", "bos_count", "prompt_digest"}


def test_the_digest_is_the_sha256_of_the_ids_and_bos_is_counted():
    ids = [2, 105, 2364, 107]
    printed = prompt_print(ids, 2)
    assert printed["prompt_digest"] == hashlib.sha256(b"2,105,2364,107").hexdigest()
    assert printed["bos_count"] == 1
    assert prompt_print(ids, None)["bos_count"] is None  # a tokenizer without a BOS
    assert prompt_print(None, 2) == {}  # ids unknown: nothing claimed


@pytest.mark.engine
def test_smoke_json_prints_only_the_probes_on_stdout():
    require_model("smollm2-135m-instruct")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "murgat_local.cli",
            "smoke",
            "--json",
            "--verbose",
            "--engine",
            "transformers",
            "--model",
            "smollm2-135m-instruct",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=dict(os.environ, COLUMNS="80"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)  # nothing else on stdout
    assert [r["modality"] for r in rows] == ["text"]
    (row,) = rows
    assert FIELDS <= set(row)
    assert row["model"] == "smollm2-135m-instruct" and row["engine"] == "transformers"
    assert row["verdict"] in ("YES", "NO") and row["prompt_tokens"] > 0
    assert len(row["prompt_digest"]) == 64
    # SmolLM2's BOS is <|im_start|>, which opens each of the three turns.
    assert row["bos_count"] == 3


def test_smoke_json_refuses_reach():
    done = subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", "smoke", "--json", "--reach"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "--json" in done.stderr
