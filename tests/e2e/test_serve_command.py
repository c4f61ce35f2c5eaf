"""`murgat serve` as a user runs it: refused before a server starts, the key never echoed."""

from __future__ import annotations

import pytest
from support.paths import require_model

from murgat_local.engines import load_preset


def murgat_serve(*args, key=None):
    import os
    import subprocess
    import sys

    from support.paths import ROOT

    env = {k: v for k, v in os.environ.items() if k != "VLLM_API_KEY"}
    if key is not None:
        env["VLLM_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", "serve", "smollm2-135m-instruct", *args],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "300"},
        cwd=ROOT,
        timeout=120,
    )


def test_a_server_off_loopback_without_a_key_is_refused_before_it_starts():
    """No vLLM is started here: without a key the command stops at exit 2, naming the variable
    (the same check guards every ServerProcess: --data-parallel, the tests)."""
    from murgat_local.serving import ServeRefused, ServerProcess

    require_model("smollm2-135m-instruct")
    for args in (["--host", "0.0.0.0"], ["--host", "0.0.0.0", "--print"], ["--host", "::"]):
        proc = murgat_serve(*args)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert (
            "VLLM_API_KEY is not set" in proc.stderr and "--api-key-env VLLM_API_KEY" in proc.stderr
        )
    assert murgat_serve("--host", "0.0.0.0", "--print", key="  ").returncode == 2  # blank is no key
    with pytest.raises(ServeRefused, match="VLLM_API_KEY"):
        ServerProcess(
            load_preset("smollm2-135m-instruct"), host="0.0.0.0", env={"PATH": "/usr/bin"}
        )


def test_the_key_comes_from_the_environment_and_is_never_printed_or_in_argv():
    secret = "s3cret-judge-key-7f3a"
    proc = murgat_serve("--host", "0.0.0.0", "--print", key=secret)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert secret not in proc.stdout + proc.stderr
    assert (
        "API key: required (from VLLM_API_KEY)" in proc.stderr and "--host 0.0.0.0" in proc.stderr
    )
    assert "--api-key" not in proc.stderr
    assert "API key: none" in murgat_serve("--print").stderr  # loopback: no key needed


def test_the_api_key_flag_is_refused_by_the_command_and_not_echoed():
    proc = murgat_serve("--print", "--api-key", "s3cret-on-argv")
    assert (
        proc.returncode == 2
        and "put the key in the environment variable VLLM_API_KEY" in proc.stderr
    )
    assert "s3cret-on-argv" not in proc.stderr + proc.stdout
