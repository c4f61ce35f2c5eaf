"""`murgat serve PRESET`: the real `vllm serve`, with the preset's engine arguments and a judge's flags."""

from __future__ import annotations

import os
import pathlib
import shlex

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def serve(
    ctx: typer.Context,
    preset: str = typer.Argument(
        ..., help="model preset (see `murgat models`) or a model directory"
    ),
    port: int = typer.Option(8000, "--port"),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="0.0.0.0 to serve the LAN: then the API key must be in VLLM_API_KEY",
    ),
    device: str | None = typer.Option(
        None, "--device", help="CUDA_VISIBLE_DEVICES for this server"
    ),
    models_dir: pathlib.Path | None = typer.Option(
        None, "--models-dir", envvar="MURGAT_MODELS_DIR"
    ),
    print_only: bool = typer.Option(
        False, "--print", help="print the command and the fingerprint; start nothing"
    ),
) -> None:
    """Start `vllm serve` for PRESET. Arguments after the options go to vLLM unchanged (except
    those that would undo a guarantee: --host, --api-key, --allowed-*-media-*, --config).

    Off loopback the server needs an API key, taken from VLLM_API_KEY (never the command line);
    with a key set, every route but /health and /ping asks for it. It takes media inline only: a URL a client names is never fetched. Scorers reach it with
    `--engine openai --base-url http://HOST:PORT/v1` (and `--api-key-env VLLM_API_KEY`); on
    another machine, where the weights are not readable, add `--fingerprint` with the value
    printed here, and `--tokenizer DIR` with a copy of the model's tokenizer files.
    """
    from ..engines import ModelNotFound, load_preset
    from ..engines.identity import weights_fingerprint
    from ..engines.placement import Gpus, lay_out, seen
    from ..serving.launcher import API_KEY_VAR, check_exposure, serve_command, serve_env

    try:  # every refusal before anything starts (or is hashed)
        env = serve_env(device=device)
        check_exposure(host, env)
        p = load_preset(preset, models_root=models_dir)
        # The layout for the GPUs the server will see (its --device, else all), or the --fit
        # line where they cannot hold the model.
        gpus = seen("vllm")
        if gpus is not None and device is not None:
            gpus = Gpus(gpus.memory_gib, len([d for d in device.split(",") if d.strip()]))
        p = lay_out(p, gpus)
        command = serve_command(p, host=host, port=port, extra=tuple(ctx.args))
        env = serve_env(device=device, command=command)
    except (ModelNotFound, ValueError) as e:
        ui._fail(str(e))
    fingerprint = weights_fingerprint(p.require_path().resolve())
    keyed = bool((env.get(API_KEY_VAR) or "").strip())
    ui.err.print(f"serving {p.name} on http://{host}:{port}/v1", markup=False, soft_wrap=True)
    ui.err.print(f"fingerprint {fingerprint}", markup=False, soft_wrap=True)
    ui.err.print(
        f"API key: {f'required (from {API_KEY_VAR})' if keyed else 'none'}; media: inline only",
        markup=False,
        soft_wrap=True,
    )
    ui.err.print(shlex.join(command), markup=False, soft_wrap=True)
    if print_only:
        raise typer.Exit(0)
    env.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    os.execvpe(command[0], command, env)  # this process becomes the server: signals reach vLLM
