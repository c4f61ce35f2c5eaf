"""`murgat serve PRESET`: the real `vllm serve`, with the preset's engine arguments and a judge's flags."""

from __future__ import annotations

import os
import pathlib
import shlex
from typing import Optional

import typer

import murgat_local.cli as ui
from murgat_local.cli import app


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def serve(
    ctx: typer.Context,
    preset: str = typer.Argument(..., help="model preset (see `murgat models`) or a model directory"),
    port: int = typer.Option(8000, "--port"),
    host: str = typer.Option("127.0.0.1", "--host", help="0.0.0.0 to serve the LAN"),
    device: Optional[str] = typer.Option(None, "--device", help="CUDA_VISIBLE_DEVICES for this server"),
    models_dir: Optional[pathlib.Path] = typer.Option(None, "--models-dir", envvar="MURGAT_MODELS_DIR"),
    print_only: bool = typer.Option(False, "--print", help="print the command and the fingerprint; start nothing"),
) -> None:
    """Start `vllm serve` for PRESET. Arguments after the options go to vLLM unchanged.

    Scorers reach it with `--engine openai --base-url http://HOST:PORT/v1`; on another machine,
    where the weights are not readable, add `--fingerprint` with the value printed here.
    """
    from ..engines import ModelNotFound, load_preset
    from ..engines.identity import weights_fingerprint
    from ..serving.launcher import serve_command, serve_env

    try:
        p = load_preset(preset, models_root=models_dir)
        command = serve_command(p, host=host, port=port, extra=tuple(ctx.args))
    except (ModelNotFound, ValueError) as e:
        ui._fail(str(e))
    fingerprint = weights_fingerprint(p.require_path().resolve())
    ui.err.print(f"serving {p.name} on http://{host}:{port}/v1", markup=False, soft_wrap=True)
    ui.err.print(f"fingerprint {fingerprint}", markup=False, soft_wrap=True)
    ui.err.print(shlex.join(command), markup=False, soft_wrap=True)
    if print_only:
        raise typer.Exit(0)
    env = serve_env(device=device)
    env.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    os.execvpe(command[0], command, env)  # this process becomes the server: signals reach vLLM
