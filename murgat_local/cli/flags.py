"""The flags several commands share, each defined once with one help text, under the name of the
configuration key it overrides; and the one way a command loads its configuration.

Every such flag is an override of the typed configuration (`config.RunConfig` /
`GenerateConfig`): validated exactly as the same key in a TOML file, and refused the same way,
one line per key naming the flag and the key (`FLAG_OF_KEY`).
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import TypeVar

import typer

import murgat_local.cli.ui as ui

# The run: where it reads and writes.
CONFIG = typer.Option(
    None,
    "--config",
    help="TOML run configuration: scoring settings at the top level, generation under [generate]",
)
_OUT = (
    "where to write: a folder (score, run); a .jsonl file for one cell or a folder for a grid "
    "(generate); the rescored records as JSONL (rescore)"
)
OUT = typer.Option(..., "--out", help=_OUT)
OUT_RECORDS = typer.Option(None, "--out", help=_OUT)
_MEDIA_ROOT = "folder holding the videos (generate, run: default the benchmark folder)"
MEDIA_ROOT = typer.Option(..., "--media-root", help=_MEDIA_ROOT)
DATASET_MEDIA_ROOT = typer.Option(None, "--media-root", help=_MEDIA_ROOT)
LIMIT = typer.Option(None, "--limit", help="only the first N responses (or questions)")
CACHE = typer.Option(
    None,
    "--cache",
    help="the cache of model calls, kept across runs (default: in the output folder)",
)
MODELS_DIR = typer.Option(
    None,
    "--models-dir",
    envvar="MURGAT_MODELS_DIR",
    help="where presets' relative model paths live",
)
ALLOW_OUTSIDE = typer.Option(
    [],
    "--allow-outside",
    help="a folder outside --media-root that videos may be in (repeatable)",
)
VERBOSE = typer.Option(
    False, "--verbose", help="show engine logs here instead of OUT/engine.log (named on stderr)"
)

# The engine (the same names as the config's keys).
ENGINE = typer.Option(
    None,
    "--engine",
    help="vllm (default), openai (a server: --base-url), transformers, or another registered "
    "engine",
)
BASE_URL = typer.Option(None, "--base-url", help="engine openai: the server, http://HOST:PORT/v1")
API_KEY_ENV = typer.Option(
    None, "--api-key-env", help="engine openai: the variable holding the server's key"
)
MAX_CONCURRENCY = typer.Option(
    None, "--max-concurrency", help="engine openai: requests in flight (default 32)"
)
FINGERPRINT = typer.Option(
    None,
    "--fingerprint",
    help="engine openai: the served weights' fingerprint, when they are not readable here",
)
DATA_PARALLEL = typer.Option(
    None, "--data-parallel", help="N vLLM replicas, one per GPU, share each batch"
)
TOKENIZER = typer.Option(
    None,
    "--tokenizer",
    help="engine openai, weights not readable here: a folder with the served model's "
    "tokenizer files (its special tokens are broken in evaluated text)",
)

# The judges of `score` and `run`.
JUDGE = typer.Option(None, "--judge", help="model for every scoring stage (preset or directory)")
VERIFIER = typer.Option(None, "--verifier", help="model for verifiable-claim identification")
DECOMPOSER = typer.Option(
    None, "--decomposer", help="model for decontextualization and decomposition"
)
ENTAILER = typer.Option(None, "--entailer", help="model for attribution")
ENTAILER_VISUAL = typer.Option(
    None,
    "--entailer-visual",
    help="model for facts whose citations are all visual (default: the entailer)",
)
ENTAILER_AUDIO = typer.Option(
    None,
    "--entailer-audio",
    help="model for facts whose citations are all audio (default: the entailer)",
)

# What is judged of each response (`score`, `run`, `segment`, `rescore`).
COMPAT = typer.Option(None, "--compat", help="'reference' reproduces the public reference")
NO_DECONTEXT = typer.Option(False, "--no-decontextualize", help="skip decontextualization")
PARSE_REASONING = typer.Option(
    False, "--parse-reasoning", help="with --compat reference: the reference's --parse_reasoning"
)
GROUP_BY = typer.Option(
    [],
    "--group-by",
    help="also summarize per value of this field: a key of the responses' "
    "`categories`, or model, benchmark, question_type (repeatable)",
)

# The responders of `generate` and `run`.
MODEL = typer.Option(..., "--model", help="responder model (repeat for a grid)")
STRATEGY = typer.Option(
    ["base"],
    "--strategy",
    help="base, cite, posthoc[:cite], program:{logic,narrative}-{declarative,imperative} "
    "(repeat for a grid)",
)
SAMPLES = typer.Option(None, "--samples", help="samples per item (seeds seed..seed+K-1)")
SEED = typer.Option(None, "--seed", help="sampling seed, and the draw of --sample")
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

# The configuration key each flag overrides, where the names differ: a refused key is reported
# under its flag. A key not here is its flag's name (`limit`: --limit).
FLAG_OF_KEY = {
    "models": "--model",
    "strategies": "--strategy",
    "sample_seed": "--seed",
    "sampling.seed": "--seed",
    "sampling.temperature": "--temperature",
    "sampling.top_p": "--top-p",
    "sampling.top_k": "--top-k",
    "sampling.max_tokens": "--max-tokens",
    "sampling.thinking_budget": "--thinking-budget",
    "server.base_url": "--base-url",
    "server.api_key_env": "--api-key-env",
    "server.max_concurrency": "--max-concurrency",
    "server.fingerprint": "--fingerprint",
    "server.tokenizer": "--tokenizer",
    "decontextualize": "--no-decontextualize",
}


def engine_overrides(
    engine, base_url, api_key_env, max_concurrency, fingerprint, data_parallel, tokenizer=None
) -> dict:
    """The engine flags as configuration overrides."""
    return {
        "engine": engine,
        "data_parallel": data_parallel,
        "server": {
            "base_url": base_url,
            "api_key_env": api_key_env,
            "max_concurrency": max_concurrency,
            "fingerprint": fingerprint,
            "tokenizer": tokenizer,
        },
    }


def judged_overrides(
    compat: str | None, no_decontext: bool, parse_reasoning: bool, limit: int | None
) -> dict:
    """What is judged of each response, as overrides (None: the file's value, or the default)."""
    if compat not in (None, "reference"):
        ui._fail(f"--compat takes 'reference', not {compat!r}")
    return {
        "compat": compat,
        "decontextualize": False if no_decontext else None,
        "parse_reasoning": parse_reasoning or None,
        "limit": limit,
    }


def subset_overrides(sample, seed, stratify) -> dict:
    """--sample / --seed / --stratify as overrides."""
    if stratify is not None and sample is None:
        ui._fail("--stratify draws a subset: give --sample N too")
    return {"sample": sample, "sample_seed": seed, "stratify": stratify}


C = TypeVar("C")


def load(
    loader: Callable[[pathlib.Path | None, dict], C], config: pathlib.Path | None, overrides: dict
) -> C:
    """`loader(config, overrides)` (`config.load_config` / `load_generate_config`); a refused
    configuration is a usage error (exit 2), one line per key: its flag or its file, the key,
    the allowed range and the value given. Nothing has started yet."""
    from ..config_errors import ConfigError

    try:
        return loader(config, overrides)
    except ConfigError as e:
        for p in e.problems:
            ui._error(p.line(FLAG_OF_KEY))
        raise typer.Exit(ui.USAGE_ERROR) from None
    except (OSError, ValueError) as e:
        ui._fail(f"bad configuration: {config}: {e}" if config else f"bad configuration: {e}")
