"""`murgat program run`: one plan, by hand, against one video, to debug plans and prompts."""

from __future__ import annotations

import os
import pathlib
import re
import tempfile

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app

program_app = typer.Typer(
    no_args_is_help=True, help="Program-aided responders' plans, run by hand."
)
app.add_typer(program_app, name="program")

_FIND = re.compile(r"\bfind\s*\(")


@program_app.command("run")
def run(
    program_file: pathlib.Path = typer.Argument(
        ..., help="the plan: a logic program or numbered narrative lines"
    ),
    style: str = typer.Option(..., "--style", help="logic or narrative"),
    video: str = typer.Option(..., "--video", help="video path or id under --media-root"),
    media_root: pathlib.Path = typer.Option(..., "--media-root"),
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
    config: pathlib.Path | None = typer.Option(
        None, "--config", help="TOML: [generate] sampling, program_limits, media"
    ),
    engine: str | None = typer.Option(None, "--engine"),
    models_dir: pathlib.Path | None = typer.Option(
        None, "--models-dir", envvar="MURGAT_MODELS_DIR"
    ),
    cache: pathlib.Path | None = typer.Option(
        None, "--cache", help="keep the tools' answers here (default: none kept)"
    ),
    allow_outside: list[pathlib.Path] = typer.Option([], "--allow-outside"),
    verbose: bool = typer.Option(False, "--verbose", help="show engine logs here"),
) -> None:
    """Run PROGRAM_FILE with the real tools and print its trace as JSON. Exit 0 when the plan ran
    to its end; 1, with the reason, when it was refused, stopped or failed."""
    from ..engines import LazyEngine, ModelNotFound, Sampling, load_preset
    from ..generate.media import plan_media
    from ..generate.program_tools import TOOL_PROMPTS
    from ..generate.strategies import Strategy
    from ..jsonl import dumps_record
    from ..judges import load_prompt
    from ..judges.calls import Outcome
    from ..media.segments import SegmentCutter
    from ..media.source import MediaError
    from ..pipeline.cache import VerdictCache
    from ..pipeline.judging import StageJudge
    from ..pipeline.programs import ProgramJob, execute
    from .generate import _generate_config

    if style not in ("logic", "narrative"):
        cli._fail(f"--style takes logic or narrative, not {style!r}")
    if variant not in (None, "declarative", "imperative"):
        cli._fail(f"--variant takes declarative or imperative, not {variant!r}")
    if not program_file.is_file():
        cli._fail(f"program file {program_file} does not exist")
    if not media_root.is_dir():
        cli._fail(f"--media-root {media_root} is not a folder")
    source = program_file.read_text(encoding="utf-8", errors="replace")
    variant = variant or ("imperative" if _FIND.search(source) else "declarative")
    strategy = Strategy("program", f"{style}-{variant}")
    cfg = _generate_config(
        config,
        {
            "models": [model],
            "engine": engine,
            "models_dir": models_dir,
            "allow_outside": allow_outside or None,
        },
    )
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    work = pathlib.Path(tempfile.mkdtemp(prefix="murgat-program-"))
    cutter = SegmentCutter(
        media_root,
        cfg.media.options(),
        **cfg.media.bounds(),
        allow_outside=tuple(cfg.allow_outside),
    )
    try:
        ref = cutter.source(video)
    except MediaError as e:
        cutter.close()
        cli._fail(str(e))
    try:
        preset = load_preset(model, models_root=cfg.models_dir)
    except (ModelNotFound, ValueError) as e:
        cli._fail(str(e))
    kind, transport = cfg.engine_for(None)
    holder = LazyEngine(kind, preset, seed=cfg.sampling.seed, **cfg.engine_args, **transport)
    store = VerdictCache(cache or work / "cache.sqlite")
    judge = StageJudge("program", holder, store, batch_size=cfg.batch_size)
    prompts = {n: load_prompt(n) for n in TOOL_PROMPTS}
    s = cfg.sampling
    job = ProgramJob(
        ("plan",),
        strategy,
        Outcome(raw=source),
        ref,
        plan_media(cutter, ref, preset),
        question,
        list(option),
        Sampling(
            max_tokens=s.max_tokens,
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k,
            seed=s.seed,
        ),
    )
    with cli._running(work, quiet=not verbose):
        try:
            result = execute([job], judge, cutter, prompts, cfg.limits())[("plan",)]
        finally:
            holder.close()
            cutter.close()
            store.close()
    trace = result.record.get("trace", {})
    report = {
        "status": trace.get("status"),
        "error": result.error,
        "response": result.response,
        "program": result.record,
        "model": model,
        "video": str(ref.path),
    }
    cli.console.print(dumps_record(report, indent=2), markup=False, highlight=False, soft_wrap=True)
    if trace.get("status") != "ok":
        cli._error(result.error or "the program did not run")
        raise typer.Exit(1)
    raise typer.Exit(0)
