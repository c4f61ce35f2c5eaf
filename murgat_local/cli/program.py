"""`murgat program run`: one plan, by hand, against one video, to debug plans and prompts."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as cli
from murgat_local.cli.options import GENERATE
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app

program_app = typer.Typer(
    no_args_is_help=True, help="Program-aided responders' plans, run by hand."
)
app.add_typer(program_app, name="program")


@program_app.command("run")
@takes("program run")
def run(
    program_file: pathlib.Path = typer.Argument(
        ..., help="the plan: a logic program or numbered narrative lines"
    ),
    style: str = typer.Option(..., "--style", help="logic or narrative"),
    video: str = typer.Option(..., "--video", help="video path or id under --media-root"),
    model: str = typer.Option(..., "--model", help="the model behind the tools"),
    variant: str | None = typer.Option(
        None,
        "--variant",
        help="declarative or imperative (default: imperative when the plan calls find)",
    ),
    question: str = typer.Option("", "--question", help="the question the answer tool decides"),
    option: list[str] = typer.Option(
        [], "--option", help="an answer option (repeat, in order A, B, ...)"
    ),
    cache: pathlib.Path | None = typer.Option(
        None, "--cache", help="keep the tools' answers here (default: none kept)"
    ),
    *,
    media_root: pathlib.Path,
    config: pathlib.Path | None,
    verbose: bool,
    given: Given,
) -> None:
    """Run PROGRAM_FILE with the real tools and print its trace as JSON. Exit 0 when the plan ran
    to its end; 1, with the reason, when it was refused, stopped or failed."""
    from ..config import load_generate_config
    from ..jsonl import dumps_record
    from ..pipeline.program_run import PlanRun

    if style not in ("logic", "narrative"):
        cli._fail(f"--style takes logic or narrative, not {style!r}")
    if variant not in (None, "declarative", "imperative"):
        cli._fail(f"--variant takes declarative or imperative, not {variant!r}")
    if not program_file.is_file():
        cli._fail(f"program file {program_file} does not exist")
    if not media_root.is_dir():
        cli._fail(f"--media-root {media_root} is not a folder")
    source = program_file.read_text(encoding="utf-8", errors="replace")
    cfg = f.load(load_generate_config, config, given.of(GENERATE) | {"models": [model]})
    cli.show_engine_logs(verbose)
    plan = cli.set_up(
        PlanRun, cfg, source, style, variant, video, media_root, question, tuple(option), cache
    )
    with cli._running(plan.work, quiet=not verbose):
        report = plan.run()
    cli.console.print(dumps_record(report, indent=2), markup=False, highlight=False, soft_wrap=True)
    if report["status"] != "ok":
        cli._error(report["error"] or "the program did not run")
        raise typer.Exit(1)
    raise typer.Exit(0)
