"""`murgat generate` and `murgat run`: responders on the dataset, then (for `run`) the scorer."""

from __future__ import annotations

import pathlib

import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as cli
from murgat_local.cli.ui import app


def _open(dataset: pathlib.Path, media_root: pathlib.Path | None, fmt: str | None):
    """The dataset and the folder its videos are under: --media-root, else the benchmark's own."""
    from ..inputs.benchmarks import DatasetFormatError, open_dataset

    try:
        ds = open_dataset(dataset, fmt)
    except DatasetFormatError as e:
        cli._fail(str(e))
    root = media_root or ds.media_root
    if root is None:
        cli._fail(
            f"--media-root is needed: {dataset} is a plain question file ({ds.format}), "
            "its videos could be anywhere"
        )
    if not root.is_dir():
        cli._fail(f"--media-root {root} is not a folder")
    return ds, root


DATASET = typer.Argument(
    ...,
    help="a benchmark folder (WorldSense, Video-MMMU), JSONL, JSON list, parquet, or a "
    "save_to_disk folder",
)


@app.command()
def generate(
    dataset: pathlib.Path = DATASET,
    media_root: pathlib.Path | None = f.DATASET_MEDIA_ROOT,
    model: list[str] = f.MODEL,
    strategy: list[str] = f.STRATEGY,
    out: pathlib.Path = f.OUT,
    config: pathlib.Path | None = f.CONFIG,
    limit: int | None = f.LIMIT,
    samples: int | None = f.SAMPLES,
    from_file: pathlib.Path | None = typer.Option(
        None, "--from", help="posthoc: edit the answers in this file"
    ),
    answer_judge: str | None = typer.Option(
        None, "--answer-judge", help="maps free answers to options (default: the responder)"
    ),
    allow_outside: list[pathlib.Path] = f.ALLOW_OUTSIDE,
    engine: str | None = f.ENGINE,
    base_url: str | None = f.BASE_URL,
    api_key_env: str | None = f.API_KEY_ENV,
    max_concurrency: int | None = f.MAX_CONCURRENCY,
    fingerprint: str | None = f.FINGERPRINT,
    tokenizer: pathlib.Path | None = f.TOKENIZER,
    data_parallel: int | None = f.DATA_PARALLEL,
    temperature: float | None = typer.Option(None, "--temperature"),
    top_p: float | None = typer.Option(None, "--top-p"),
    top_k: int | None = typer.Option(None, "--top-k"),
    max_tokens: int | None = typer.Option(None, "--max-tokens"),
    seed: int | None = f.SEED,
    sample: int | None = f.SAMPLE,
    stratify: str | None = f.STRATIFY,
    dataset_format: str | None = f.DATASET_FORMAT,
    thinking_budget: int | None = typer.Option(
        None, "--thinking-budget", help="extra tokens for thinking models"
    ),
    out_format: str | None = typer.Option(
        None, "--format", help="'reference' also writes the reference's JSON list"
    ),
    models_dir: pathlib.Path | None = f.MODELS_DIR,
    cache: pathlib.Path | None = f.CACHE,
    verbose: bool = f.VERBOSE,
) -> None:
    """Answer DATASET with each model under each strategy; write what `murgat score` reads."""
    from ..config import load_generate_config
    from ..metrics.run_summary import GenerationGrades
    from ..pipeline.generating import GenerateRunner
    from ..reports.table import generation_table

    ds, media_root = _open(dataset, media_root, dataset_format)
    if out_format not in (None, "reference"):
        cli._fail(f"--format takes 'reference', not {out_format!r}")
    given: dict = {"models": model, "strategies": strategy, "limit": limit, "samples": samples}
    given |= {"answer_judge": answer_judge, "allow_outside": allow_outside or None}
    given |= f.engine_overrides(
        engine, base_url, api_key_env, max_concurrency, fingerprint, data_parallel, tokenizer
    )
    given |= {**f.subset_overrides(sample, seed, stratify), "dataset_format": dataset_format}
    given |= {"models_dir": models_dir, "cache": cache}
    # the sampling flags override the [generate.sampling] keys, validated as they are
    sampling = {"temperature": temperature, "top_p": top_p, "top_k": top_k, "seed": seed}
    given["sampling"] = sampling | {"max_tokens": max_tokens, "thinking_budget": thinking_budget}
    cfg = f.load(load_generate_config, config, given)
    runner = cli.set_up(
        GenerateRunner, cfg, media_root, out, from_file=from_file, grades=GenerationGrades()
    )
    cli.show_engine_logs(verbose)
    with cli._running(out, quiet=not verbose):
        try:
            result = runner.run(ds, reference_format=out_format == "reference")
        finally:
            runner.close()
    cli.console.print(generation_table(result.summary))
    if result.summary.get("failure"):
        cli._error(f"{result.summary['failure']}")
    for label, path in result.outputs.items():
        cli.console.print(f"wrote {path} ({label})", markup=False)
    cli.console.print(f"summary: {result.summary_path}", markup=False)
    raise typer.Exit(result.exit_code)


@app.command()
def run(
    dataset: pathlib.Path = DATASET,
    media_root: pathlib.Path | None = f.DATASET_MEDIA_ROOT,
    model: list[str] = f.MODEL,
    strategy: list[str] = f.STRATEGY,
    judge: str | None = f.JUDGE,
    verifier: str | None = f.VERIFIER,
    decomposer: str | None = f.DECOMPOSER,
    entailer: str | None = f.ENTAILER,
    entailer_visual: str | None = f.ENTAILER_VISUAL,
    entailer_audio: str | None = f.ENTAILER_AUDIO,
    out: pathlib.Path = f.OUT,
    config: pathlib.Path | None = f.CONFIG,
    limit: int | None = f.LIMIT,
    samples: int | None = f.SAMPLES,
    sample: int | None = f.SAMPLE,
    seed: int | None = f.SEED,
    stratify: str | None = f.STRATIFY,
    dataset_format: str | None = f.DATASET_FORMAT,
    engine: str | None = f.ENGINE,
    base_url: str | None = f.BASE_URL,
    api_key_env: str | None = f.API_KEY_ENV,
    max_concurrency: int | None = f.MAX_CONCURRENCY,
    fingerprint: str | None = f.FINGERPRINT,
    tokenizer: pathlib.Path | None = f.TOKENIZER,
    data_parallel: int | None = f.DATA_PARALLEL,
    compat: str | None = f.COMPAT,
    parse_reasoning: bool = f.PARSE_REASONING,
    group_by: list[str] = f.GROUP_BY,
    allow_outside: list[pathlib.Path] = f.ALLOW_OUTSIDE,
    models_dir: pathlib.Path | None = f.MODELS_DIR,
    verbose: bool = f.VERBOSE,
) -> None:
    """Generate, then score every cell, in one output folder with shared engines and cache; write
    the paper's table (OUT/tables.md, OUT/tables.csv)."""
    from ..config import load_config, load_generate_config
    from ..jobs.grid import Grid
    from ..reports.table import grid_table

    ds, media_root = _open(dataset, media_root, dataset_format)
    shared = {
        **f.engine_overrides(
            engine, base_url, api_key_env, max_concurrency, fingerprint, data_parallel, tokenizer
        ),
        "allow_outside": allow_outside or None,
        "models_dir": models_dir,
        "cache": out / "cache.sqlite",
    }
    generation: dict = {"models": model, "strategies": strategy, "limit": limit}
    generation["samples"] = samples
    generation |= {**f.subset_overrides(sample, seed, stratify), "dataset_format": dataset_format}
    generation["sampling"] = {"seed": seed}
    gcfg = f.load(load_generate_config, config, {**shared, **generation})
    judges = {"judge": judge, "verifier": verifier, "decomposer": decomposer, "entailer": entailer}
    judges |= {"entailer_visual": entailer_visual, "entailer_audio": entailer_audio}
    judged = {**f.judged_overrides(compat, False, parse_reasoning, None)}
    # the table has a row per benchmark when the records name several
    judged["group_by"] = list(dict.fromkeys([*group_by, "benchmark"]))
    scfg = f.load(load_config, config, {**shared, **judges, **judged})
    grid = cli.set_up(Grid, gcfg, scfg, media_root, out)
    cli.show_engine_logs(verbose)
    with cli._running(out, quiet=not verbose):
        result = grid.run(ds)
    cli.console.print(grid_table(result.summary))
    cli.warn_judges(result.summary["warnings"])
    tables = " and ".join(str(p) for p in result.tables)
    cli.console.print(f"wrote {result.summary_path}, {tables}", markup=False)
    raise typer.Exit(result.exit_code)
