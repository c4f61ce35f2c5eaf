"""`murgat bundle`: stage an air-gapped install (murgat_local.bundle does the work)."""

from __future__ import annotations

import pathlib
import time

import typer

from . import ui
from .ui import app


@app.command()
def bundle(
    out: pathlib.Path = typer.Argument(..., help="the bundle's folder (created; reused)"),
    more: list[str] = typer.Argument(
        None,
        help="more presets or model folders after --models (--models A B C)",
        show_default=False,
    ),
    target: str = typer.Option(
        ..., "--target", help="cpu (vLLM's CPU build) or cuda (vLLM's CUDA build)"
    ),
    python: str | None = typer.Option(
        None, "--python", help="X.Y of the box's Python (cuda: 3.11 or 3.12); default: this one's"
    ),
    models: list[str] = typer.Option(
        None, "--models", help="presets or model folders to carry (repeatable)"
    ),
    test_models: bool = typer.Option(
        False, "--test-models", help="also carry the local test models (for install.sh's smoke)"
    ),
) -> None:
    """Stage everything an air-gapped box needs into one folder, on a connected machine.

    Downloads every wheel the target's lock for that Python (murgat_local/bundle/targets.toml)
    pins, in the build that Python takes on the target's platform (set-up's wheelhouse first,
    then pip's configured sources), builds this project's wheel,
    copies the model folders named, and writes MANIFEST.json (every file's size and sha256) and
    install.sh. On the box: `bash OUT/install.sh VENV`. A second run into the same OUT copies
    nothing already there with the right sha256."""
    from ..bundle import BundleError, build_bundle

    if more and not models:
        ui._fail(f"unexpected argument(s) {' '.join(more)}: model names go after --models")
    models = [*(models or []), *(more or [])]

    started = time.monotonic()
    with _progress() as progress:
        task = progress.add_task("copying and hashing", total=None)

        def on_step(text: str) -> None:
            progress.console.print(f"[bundle] {text}", markup=False, soft_wrap=True)

        try:
            made = build_bundle(
                out,
                target,
                python=python,
                models=models or [],
                test_models=test_models,
                on_bytes=lambda n: progress.advance(task, n),
                on_step=on_step,
            )
        except BundleError as e:
            progress.stop()
            ui._fail(str(e))
    _done(made, time.monotonic() - started)


def _progress():
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn())
    return Progress(*columns, TransferSpeedColumn(), console=ui.err, transient=True)


def _done(made, seconds: float) -> None:
    from ..bundle import human

    names = ", ".join(m["preset"] or m["folder"] for m in made.models) or "none"
    cuda = (
        f"torch for CUDA {made.cuda['version']} (NVIDIA driver {made.cuda['driver']} or newer); "
        if made.cuda
        else ""
    )
    ui.console.print(
        f"bundle {made.out}: {made.target}, Python {made.python}, {made.platform}; {cuda}"
        f"{made.wheels} wheels, models: {names}; {human(made.bytes)} "
        f"({made.copied} files written, {made.kept} already there) in {seconds:.0f} s\n"
        f"On the box: bash {made.out}/install.sh VENV",
        markup=False,
        soft_wrap=True,
    )
