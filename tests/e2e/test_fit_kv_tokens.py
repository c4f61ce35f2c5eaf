"""`murgat models --fit NAME --kv-cache-bytes B --max-model-len L` against vLLM's engine: the
token capacity it gives is the one the engine itself records at start for that cache and context
(read from the engine's own config, in a fresh process that starts each model once)."""

import json
import pathlib
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.engines import load_preset
from murgat_local.engines.identity import vllm_cpu_build

# Full attention (smollm2), sliding windows with shared KV layers (tiny-gemma4), a vision model
# (tiny-qwen3-vl): the kinds of KV plan the test models hold. scripts/check_kv_tokens.py checks
# all of them.
MODELS = ["smollm2-135m-instruct", "tiny-gemma4", "tiny-qwen3-vl"]
CACHE_BYTES = 64 * 1024**2
LENGTH = 1024
SCRIPT = pathlib.Path(__file__).parents[2] / "scripts" / "check_kv_tokens.py"


@pytest.fixture(scope="module")
def engines():
    built = [n for n in MODELS if (load_preset(n).path / "config.json").is_file()]
    if not built:
        pytest.skip("the test models are not built")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *built, "--kv-cache-bytes", str(CACHE_BYTES)]
        + ["--max-model-len", str(LENGTH)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(built), done.stderr[-3000:]
    return {r["name"]: r for r in rows}


def test_kv_tokens_are_what_the_engine_records(engines):
    gpu = "cpu" if vllm_cpu_build() else "h100"
    out = CliRunner().invoke(
        app,
        ["models", "--fit", *engines, "--gpu", gpu, "--kv-cache-bytes", str(CACHE_BYTES)]
        + ["--max-model-len", str(LENGTH), "--json"],
    )
    assert out.exit_code == 0, out.output
    ours = {r["name"]: r for r in json.loads(out.stdout)}
    for name, engine in engines.items():
        assert ours[name]["kv_tokens"] == engine["engine_kv_tokens"], (name, engine)
        assert ours[name]["block_size"] == engine["engine_block_size"], (name, engine)
        # Whole blocks: the capacity never exceeds what the bytes hold at the given cost a token.
        assert ours[name]["kv_tokens"] <= CACHE_BYTES / ours[name]["kv_bytes_per_token"] + LENGTH
