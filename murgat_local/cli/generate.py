"""`murgat generate` and `murgat run`: responders on the dataset, then (for `run`) the scorer."""

from __future__ import annotations

import os
import pathlib

import typer

import murgat_local.cli.ui as cli
from murgat_local.cli.score import GROUP_BY
from murgat_local.cli.ui import app


def _generate_config(config, overrides: dict):
    from pydantic import ValidationError

    from ..config import load_generate_config

    try:
        return load_generate_config(config, overrides)
    except (ValidationError, OSError, ValueError) as e:
        cli._fail(f"bad configuration: {e}")


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


SAMPLE = typer.Option(
    None, "--sample", min=1, help="answer N questions drawn by --seed (recorded in provenance)"
)
STRATIFY = typer.Option(
    None, "--stratify", help="with --sample: draw in proportion to this category's values"
)
DATASET_FORMAT = typer.Option(
    None,
    "--dataset-format",
    help="the dataset's format when detection cannot tell (see murgat dataset)",
)


def _subset(sample, seed, stratify) -> dict:
    if stratify is not None and sample is None:
        cli._fail("--stratify draws a subset: give --sample N too")
    return {"sample": sample, "sample_seed": seed, "stratify": stratify}


@app.command()
def generate(
    dataset: pathlib.Path = typer.Argument(
        ...,
        help="a benchmark folder (WorldSense, Video-MMMU), JSONL, JSON list, parquet, or a save_to_disk folder",
    ),
    media_root: pathlib.Path | None = typer.Option(
        None, "--media-root", help="folder holding the videos (default: the benchmark folder)"
    ),
    model: list[str] = typer.Option(..., "--model", help="responder model (repeat for a grid)"),
    strategy: list[str] = typer.Option(
        ["base"],
        "--strategy",
        help="base, cite, posthoc[:cite], program:{logic,narrative}-{declarative,imperative} (repeat for a grid)",
    ),
    out: pathlib.Path = typer.Option(
        ..., "--out", help="a .jsonl file (one cell) or a folder (a grid)"
    ),
    config: pathlib.Path | None = typer.Option(
        None, "--config", help="TOML file; its [generate] table"
    ),
    limit: int | None = typer.Option(None, "--limit"),
    samples: int | None = typer.Option(
        None, "--samples", help="samples per item (seeds seed..seed+K-1)"
    ),
    from_file: pathlib.Path | None = typer.Option(
        None, "--from", help="posthoc: edit the answers in this file"
    ),
    answer_judge: str | None = typer.Option(
        None, "--answer-judge", help="maps free answers to options (default: the responder)"
    ),
    allow_outside: list[pathlib.Path] = typer.Option(
        [], "--allow-outside", help="a folder outside --media-root videos may be in"
    ),
    engine: str | None = typer.Option(None, "--engine", help=cli.ENGINE_HELP),
    base_url: str | None = cli.BASE_URL,
    api_key_env: str | None = cli.API_KEY_ENV,
    max_concurrency: int | None = cli.MAX_CONCURRENCY,
    fingerprint: str | None = cli.FINGERPRINT,
    tokenizer: pathlib.Path | None = cli.TOKENIZER,
    data_parallel: int | None = cli.DATA_PARALLEL,
    temperature: float | None = typer.Option(None, "--temperature"),
    top_p: float | None = typer.Option(None, "--top-p"),
    top_k: int | None = typer.Option(None, "--top-k"),
    max_tokens: int | None = typer.Option(None, "--max-tokens"),
    seed: int | None = typer.Option(None, "--seed", help="sampling seed, and the draw of --sample"),
    sample: int | None = SAMPLE,
    stratify: str | None = STRATIFY,
    dataset_format: str | None = DATASET_FORMAT,
    thinking_budget: int | None = typer.Option(
        None, "--thinking-budget", help="extra tokens for thinking models"
    ),
    out_format: str | None = typer.Option(
        None, "--format", help="'reference' also writes the reference's JSON list"
    ),
    models_dir: pathlib.Path | None = typer.Option(
        None, "--models-dir", envvar="MURGAT_MODELS_DIR"
    ),
    cache: pathlib.Path | None = typer.Option(None, "--cache"),
    verbose: bool = typer.Option(False, "--verbose", help="show engine logs here"),
) -> None:
    """Answer DATASET with each model under each strategy; write what `murgat score` reads."""
    from ..engines import ModelNotFound
    from ..metrics.run_summary import GenerationGrades
    from ..pipeline.generating import GenerateRunner
    from ..reports.table import generation_table

    ds, media_root = _open(dataset, media_root, dataset_format)
    if out_format not in (None, "reference"):
        cli._fail(f"--format takes 'reference', not {out_format!r}")
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    sampling = {
        k: v
        for k, v in {
            "temperature": temperature,
            "top_p": top_p,
            "top_k": top_k,
            "max_tokens": max_tokens,
            "seed": seed,
            "thinking_budget": thinking_budget,
        }.items()
        if v is not None
    }
    cfg = _generate_config(
        config,
        {
            "models": model,
            "strategies": strategy,
            "limit": limit,
            "samples": samples,
            "answer_judge": answer_judge,
            **cli.engine_overrides(
                engine,
                base_url,
                api_key_env,
                max_concurrency,
                fingerprint,
                data_parallel,
                tokenizer,
            ),
            "allow_outside": allow_outside or None,
            **_subset(sample, seed, stratify),
            "dataset_format": dataset_format,
            # the flags override the [generate.sampling] keys, validated as they are
            "sampling": sampling,
            "models_dir": models_dir,
            "cache": cache,
        },
    )
    try:
        runner = GenerateRunner(
            cfg, media_root, out, from_file=from_file, grades=GenerationGrades()
        )
    except (ModelNotFound, ValueError) as e:
        cli._fail(str(e))
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
    dataset: pathlib.Path = typer.Argument(
        ..., help="a benchmark folder or question file, as for generate"
    ),
    media_root: pathlib.Path | None = typer.Option(
        None, "--media-root", help="default: the benchmark folder"
    ),
    model: list[str] = typer.Option(..., "--model", help="responder model (repeat for a grid)"),
    strategy: list[str] = typer.Option(["base"], "--strategy", help="repeat for a grid"),
    judge: str | None = typer.Option(None, "--judge", help="judge model for every scoring stage"),
    verifier: str | None = typer.Option(None, "--verifier"),
    decomposer: str | None = typer.Option(None, "--decomposer"),
    entailer: str | None = typer.Option(None, "--entailer"),
    entailer_visual: str | None = cli.ENTAILER_VISUAL,
    entailer_audio: str | None = cli.ENTAILER_AUDIO,
    out: pathlib.Path = typer.Option(..., "--out", help="output folder"),
    config: pathlib.Path | None = typer.Option(
        None, "--config", help="TOML: scoring settings, and [generate]"
    ),
    limit: int | None = typer.Option(None, "--limit"),
    samples: int | None = typer.Option(None, "--samples"),
    sample: int | None = SAMPLE,
    seed: int | None = typer.Option(None, "--seed", help="sampling seed, and the draw of --sample"),
    stratify: str | None = STRATIFY,
    dataset_format: str | None = DATASET_FORMAT,
    engine: str | None = typer.Option(None, "--engine", help=cli.ENGINE_HELP),
    base_url: str | None = cli.BASE_URL,
    api_key_env: str | None = cli.API_KEY_ENV,
    max_concurrency: int | None = cli.MAX_CONCURRENCY,
    fingerprint: str | None = cli.FINGERPRINT,
    tokenizer: pathlib.Path | None = cli.TOKENIZER,
    data_parallel: int | None = cli.DATA_PARALLEL,
    compat: str | None = typer.Option(None, "--compat"),
    parse_reasoning: bool = typer.Option(
        False, "--parse-reasoning", help="with --compat reference"
    ),
    group_by: list[str] = GROUP_BY,
    allow_outside: list[pathlib.Path] = typer.Option([], "--allow-outside", help="repeatable"),
    models_dir: pathlib.Path | None = typer.Option(
        None, "--models-dir", envvar="MURGAT_MODELS_DIR"
    ),
    verbose: bool = typer.Option(False, "--verbose"),
) -> None:
    """Generate, then score every cell, in one output folder with shared engines and cache; write
    the paper's table (OUT/tables.md, OUT/tables.csv)."""
    from pydantic import ValidationError

    from ..config import load_config
    from ..engines import ModelNotFound, close_all
    from ..jsonl import write_json
    from ..metrics.accuracy import taxes_by_model
    from ..metrics.run_summary import GenerationGrades
    from ..metrics.run_summary import RunSummary as ScoreSummary
    from ..pipeline.generating import GenerateRunner
    from ..pipeline.runner import Runner
    from ..reports import paper_table
    from ..reports.table import grid_table
    from ..results import RunSummary, layout

    ds, media_root = _open(dataset, media_root, dataset_format)
    if out.suffix == ".jsonl":
        cli._fail("--out of `murgat run` is a folder")
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"
    shared_cache = out / "cache.sqlite"
    gcfg = _generate_config(
        config,
        {
            "models": model,
            "strategies": strategy,
            "limit": limit,
            "samples": samples,
            "models_dir": models_dir,
            **cli.engine_overrides(
                engine,
                base_url,
                api_key_env,
                max_concurrency,
                fingerprint,
                data_parallel,
                tokenizer,
            ),
            "allow_outside": allow_outside or None,
            **_subset(sample, seed, stratify),
            "dataset_format": dataset_format,
            **({"sampling": {"seed": seed}} if seed is not None else {}),
            "cache": shared_cache,
        },
    )
    try:
        scfg = load_config(
            config,
            {
                "judge": judge,
                "verifier": verifier,
                "decomposer": decomposer,
                "entailer": entailer,
                "compat": compat,
                "entailer_visual": entailer_visual,
                "entailer_audio": entailer_audio,
                **cli.engine_overrides(
                    engine,
                    base_url,
                    api_key_env,
                    max_concurrency,
                    fingerprint,
                    data_parallel,
                    tokenizer,
                ),
                "parse_reasoning": parse_reasoning or None,
                # the table has a row per benchmark when the records name several
                "group_by": list(dict.fromkeys([*group_by, "benchmark"])),
                "allow_outside": allow_outside or None,
                "models_dir": models_dir,
                "cache": shared_cache,
            },
        )
    except (ValidationError, OSError, ValueError) as e:
        cli._fail(f"bad configuration: {e}")
    try:
        generator = GenerateRunner(gcfg, media_root, out, grades=GenerationGrades())
        # One engine per model for everything: responders, answer judge and every cell's scorer.
        engines = dict(generator.engines)
        scorers = {}
        for cell in generator.cells:
            scorers[cell.label] = Runner(
                scfg,
                media_root,
                generator.paths[cell].parent,
                engines=engines,
                summary=ScoreSummary,
            )
            engines.update(scorers[cell.label].engines)
    except (ModelNotFound, ValueError) as e:
        cli._fail(str(e))
    grid: dict[str, dict] = {}
    cells: list = []
    warnings: list[str] = []  # about the judges, from each cell's scoring, printed once
    code = 0
    with cli._running(out, quiet=not verbose):
        try:
            result = generator.run(ds)
            code = result.exit_code
            for label, runner in scorers.items():
                scored = runner.run(result.outputs[label])
                code = max(code, scored.exit_code)
                warnings += scored.summary.get("warnings") or []
                # QA accuracy as the cell's summary.json and the tables give it (the scorer grades
                # the answer generate read; a response it could not score is not graded)
                grid[label] = {
                    **result.summary["cells"][label],
                    "accuracy": scored.summary.get("qa_accuracy"),
                    **{
                        k: scored.summary.get(k)
                        for k in (
                            "unanswered",
                            "unanswered_rate",
                            "coverage",
                            "precision",
                            "recall",
                            "f1",
                            "murgat_s",
                            "partial",
                        )
                    },
                    "scores": str(scored.records_path),
                }
                cell = result.summary["cells"][label]
                cells.append(paper_table.GridCell(cell["model"], cell["strategy"], scored.summary))
        finally:
            generator.close(engines=False)
            for r in scorers.values():
                r.close()
            close_all(engines.values())
    tables = paper_table.write(out, cells)
    taxes = taxes_by_model((c.model, c.strategy, c.summary.get("qa_accuracy")) for c in cells)
    summary = {
        "grid": grid,
        "reasoning_tax": taxes,
        "generation": str(result.summary_path),
        "failure": result.summary.get("failure"),
        "tables": [str(p) for p in tables],
        "warnings": list(dict.fromkeys(warnings)),
    }
    summary = write_json(out / layout.RUN_SUMMARY, RunSummary.model_validate(summary))
    cli.console.print(grid_table(summary))
    cli.warn_judges(warnings)
    cli.console.print(
        f"wrote {out / layout.RUN_SUMMARY}, {tables[0]} and {tables[1]}", markup=False
    )
    raise typer.Exit(code)
