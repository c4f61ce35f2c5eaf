"""`murgat models --fit` in a terminal: the fit lines and nothing of vLLM (the real command)."""


def test_the_terminal_shows_the_fit_lines_and_nothing_of_vllm():
    """Sizing builds vLLM's configs, which log (Triton, block sizes, SSM caches): as for every
    command, vLLM's output is not the terminal's. A fresh process, as a user runs it."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "murgat_local.cli",
            "models",
            "--fit",
            "--gpu",
            "h100",
            "gemma-4-31b-it",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "COLUMNS": "80"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("gemma-4-31b-it on 1x h100") and "does not fit" in done.stdout
    # The refusal names the one-H100 layout and the preset that holds it.
    assert "max_num_batched_tokens=4096" in done.stdout and "gemma-4-31b-it-h100" in done.stdout
    assert (
        "Triton" not in done.stdout + done.stderr and "block_size" not in done.stdout + done.stderr
    ), done.stderr
