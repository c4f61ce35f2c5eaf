"""`murgat segment / rescore / models / smoke`: tools that need no judge run."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import sys

import typer
from rich.markup import escape

import murgat_local.cli.flags as flags
import murgat_local.cli.ui as ui
from murgat_local.cli.model_checks import _fit_models, _reach_status, _verify_models
from murgat_local.cli.options import SCORE
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app


@app.command()
@takes("segment")
def segment(
    responses: pathlib.Path = typer.Argument(...),
    *,
    config: pathlib.Path | None,
    given: Given,
) -> None:
    """Print what `murgat score` with the same options judges of each response, as JSONL: the
    sentences, what the judges read of each, and their citations (no model, no media)."""
    from ..config import load_config
    from ..jsonl import dumps_record
    from ..pipeline.segment_view import segment_responses

    if not responses.is_file():
        ui._fail(f"responses file {responses} does not exist")
    cfg = flags.load(load_config, config, given.of(SCORE))
    for rec in segment_responses(cfg, responses):
        sys.stdout.write(dumps_record(rec) + "\n")


@app.command()
@takes("rescore")
def rescore(
    scored: pathlib.Path = typer.Argument(
        ..., help="our scores.jsonl, or the reference's scored JSON"
    ),
    *,
    out: pathlib.Path | None,
    given: Given,
) -> None:
    """Recompute scores from recorded verdicts, with no model."""
    from ..config import load_config
    from ..reports.groups_terminal import terminal_tables
    from ..reports.rescore import rescore as recompute
    from ..reports.table import summary_table

    if not scored.is_file():
        ui._fail(f"{scored} does not exist")
    cfg = flags.load(load_config, None, given.of(SCORE))
    try:
        result = recompute(scored, cfg.compat, cfg.group_by, cfg.bootstrap_resamples, out)
    except ValueError as e:
        ui._fail(str(e))
    ui.console.print(summary_table(result.summary, "MURGAT scores (rescored)"))
    for t in terminal_tables(result.summary):
        ui.console.print(t)
    ui.console.print_json(json.dumps(result.headline()))
    for rec in result.bad:  # the numbers leave out the lines that could not be read
        ui._error(str(rec))
    if result.bad:
        ui._error(f"{len(result.bad)} record line(s) could not be read (above); they are left out")
        raise typer.Exit(1)


@app.command()
def models(
    names: list[str] | None = typer.Argument(
        None,
        help="with --verify: presets or model folders "
        "(default: every preset whose folder is present)",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="every preset as a JSON list (name, modalities, present, "
        "path, architecture, engine arguments, quirks)",
    ),
    verify: bool = typer.Option(
        False,
        "--verify",
        help="check that model folders are whole: shards, headers, "
        "tokenizer and processor files, and the sha256 of every file a MANIFEST.json lists",
    ),
    fit: bool = typer.Option(
        False,
        "--fit",
        help="whether each model starts on --gpus GPUs of kind --gpu: weights, "
        "the KV cache vLLM asks for one request, the room left, and what makes it fit",
    ),
    gpu: str = typer.Option(
        "h100",
        "--gpu",
        help="with --fit: the GPU kind (h100, h200, a100-80, a100-40, l40s, rtx4090), or cpu "
        "(vLLM's CPU build; with --kv-cache-bytes)",
    ),
    gpus: int = typer.Option(1, "--gpus", min=1, help="with --fit: how many GPUs"),
    gpu_mem: float | None = typer.Option(
        None, "--gpu-mem", help="with --fit: a GPU of this many GiB instead of --gpu"
    ),
    kv_cache_bytes: int | None = typer.Option(
        None,
        "--kv-cache-bytes",
        min=1,
        help="with --fit: the tokens a KV cache of this many bytes holds, as vLLM logs at start "
        "(KV cache size: N tokens), and the KV bytes a token",
    ),
    max_model_len: int | None = typer.Option(
        None,
        "--max-model-len",
        min=1,
        help="with --kv-cache-bytes: the context (else the preset's)",
    ),
) -> None:
    """List the model presets and whether their weights are present; with --verify, check that
    their folders are whole (exit 1 naming each file that is not)."""
    from ..engines import available_presets, engine_names, load_preset
    from ..reports.table import presets_table

    if verify:
        _verify_models(names or [], as_json)
        return
    if fit:
        _fit_models(names or [], gpu, gpus, gpu_mem, as_json, kv_cache_bytes, max_model_len)
        return
    if names:
        ui._fail("model names go with --verify or --fit")
    presets = [load_preset(n) for n in available_presets()]
    if as_json:
        sys.stdout.write(
            json.dumps([{**p.as_json(), "reach": _reach_status(p)} for p in presets], indent=2)
            + "\n"
        )
        return
    ui.console.print(presets_table(presets))
    present = {
        p.name: _reach_status(p)
        for p in presets
        if (p.path / "config.json").is_file() and p.modalities - {"text"}
    }
    if present:
        from ..reports.reach_probe import verified_table

        ui.console.print(verified_table(present))
    ui.console.print(f"engines (--engine): {', '.join(engine_names())}", markup=False)


@app.command()
def smoke(
    model: list[str] = typer.Option(
        None, "--model", help="preset(s) or model folder(s); default: every local test model"
    ),
    engine: str = typer.Option("vllm", "--engine"),
    verbose: bool = typer.Option(
        False, "--verbose", help="show engine logs here instead of a log file"
    ),
    reach: bool = typer.Option(
        False,
        "--reach",
        help="send each modality cut and neutralised (frames blanked, "
        "audio muted) and check that it moves the decision token's log-probabilities",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="with --engine openai: the server's /v1 URL"
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="print only a JSON list on stdout, one object per probe (model, engine, modality, "
        "verdict, prompt_tokens, bos_count, prompt_digest); logs go to stderr or the log file",
    ),
) -> None:
    """Start each model on an engine and judge one request per modality it accepts.

    With --reach, each modality is sent twice, cut from the sample media and neutralised, and
    the table says whether that moved the output; the outcome is recorded beside the models for
    `murgat models`. Engine output goes to a log file, named on stderr (as for `murgat score`);
    exit 1 when a model fails to start, a probe gets no verdict, or a modality never moves the
    output."""
    import tempfile

    from ..judges.smoke import run_smoke, smoke_models
    from ..reports.table import smoke_table

    names = smoke_models(model or None)
    presets = _smoke_presets(names, engine)
    if (base_url is None) != (engine != "openai"):
        ui._fail("--base-url goes with --engine openai, and --engine openai needs it")
    if as_json and reach:
        ui._fail("--json prints the probes' rows; --reach has its own table and record")
    if engine == "vllm" and (refusal := _cuda_driver_refusal()):
        ui._error(refusal)
        raise typer.Exit(1)
    options = {"base_url": base_url} if base_url else {}
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    ui.err.print(_machine_line(engine, presets), markup=False, soft_wrap=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="murgat-smoke-"))
    if reach:
        _reach(names, presets, engine, options, work, verbose)
        return
    with _stdout_to_stderr(as_json), ui._running(work, quiet=not verbose):
        rows = run_smoke(names, engine, **options)
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        sys.stdout.flush()
    else:
        ui.console.print(smoke_table(rows, engine))
    failed = sum(r["verdict"] is None and not r.get("skipped") for r in rows)
    if failed:
        where = "above" if verbose else f"in {work / 'engine.log'}"
        message = (
            f"{failed} of {len(rows)} probes got no verdict; the engines' own output is {where}"
        )
        ui.err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)  # the path on one line
    raise typer.Exit(1 if failed else 0)


def _smoke_presets(names: list[str], engine: str) -> list:
    """The presets `murgat smoke` starts, each folder whole (the quick check): a usage error,
    before anything starts; a folder without a preset says what it was taken to be."""
    from ..engines import ModelNotFound, check_engine, load_preset
    from ..engines.verify import require_whole

    try:
        check_engine(engine)
        presets = [load_preset(name) for name in names]
        for p in presets:
            require_whole(p)
    except (ModelNotFound, ValueError) as e:
        ui._fail(str(e))
    for p in presets:
        for what in p.assumed:
            ui.err.print(f"{p.name}: assumed {what}", markup=False, soft_wrap=True)
    return presets


def _cuda_driver_refusal() -> str | None:
    """Why vLLM's CUDA build cannot start here: no NVIDIA driver, or one older than the series
    the installed torch's CUDA needs (drivers.toml); None on vLLM's CPU build or a good driver."""
    from ..bundle import box
    from ..engines.identity import vllm_cpu_build

    if vllm_cpu_build():
        return None
    cuda = box.installed_torch_cuda()
    need = box.needed_driver(cuda) if cuda else None
    if cuda is None or need is None:
        return None
    have, where = box.read_driver()
    problem = box.driver_problem(cuda, need, have, where)
    if problem and have is None:
        problem += (
            ": vLLM's CUDA build needs a GPU; run on a box with one, or use vLLM's CPU build "
            "(a bundle made with --target cpu)"
        )
    return problem


def _machine_line(engine: str, presets: list) -> str:
    """The CPU's model and instruction sets, and the dtype each model runs in on vLLM's CPU
    build (chosen for this CPU unless a preset or the user pins one)."""
    from ..engines.cpu import best_dtype, cpu_info
    from ..engines.identity import effective_args, vllm_cpu_build

    info = cpu_info()
    line = f"CPU: {info.line()}"
    if engine == "vllm" and vllm_cpu_build():
        dtype, why = best_dtype(info)
        line += f"\nvLLM CPU dtype: {dtype} ({why})"
        pinned = {
            p.name: d for p in presets if (d := effective_args("vllm", p, {})["dtype"]) != dtype
        }
        if pinned:
            line += "; pinned: " + ", ".join(f"{n} {d}" for n, d in pinned.items())
    return line


@contextlib.contextmanager
def _stdout_to_stderr(on: bool):
    """While `on`: whatever writes to stdout (an engine's logs under --verbose, a library's
    print) goes to stderr, so that `--json` leaves stdout to the JSON alone."""
    if not on:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _reach(
    names: list[str], presets: list, engine: str, options: dict, work: pathlib.Path, verbose: bool
) -> None:
    """`murgat smoke --reach`: the table, the record beside the models, exit 1 when a modality
    did not move the output or could not be probed."""
    from ..judges.reach_probe import run_reach, sample_media, unreached
    from ..judges.reach_record import record_reach
    from ..reports.reach_probe import reach_table

    media = sample_media(work)
    with ui._running(work, quiet=not verbose):
        rows = run_reach(names, engine, media, **options)
    ui.console.print(reach_table(rows, engine))
    for name, p in zip(names, presets):
        mine = [r for r in rows if r["model"] == name]
        if any(isinstance(r.get("moved"), bool) for r in mine):
            path = record_reach(name, p.path, engine, mine)
            ui.err.print(f"{name}: recorded in {path}", markup=False, soft_wrap=True)
    failed = unreached(rows)
    if failed:
        where = "above" if verbose else f"in {work / 'engine.log'}"
        listed = ", ".join(f"{r['model']} {r['modality']}" for r in failed)
        message = (
            f"{len(failed)} modalities did not move the output or could not be probed ({listed}); "
            f"the engines' own output is {where}"
        )
        ui.err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(1 if failed else 0)
