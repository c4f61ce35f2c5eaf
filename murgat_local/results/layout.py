"""Where a run's files are: the one place that names them.

A `murgat score` folder holds `scores.jsonl` (one score record per response), `summary.json`,
`verdicts.sqlite` (the verdict cache) and `engine.log`. A `murgat generate` folder holds
`generation_summary.json`, `cache.sqlite` and one folder per cell with its `responses.jsonl`
(a `.jsonl` OUT: `OUT`, `OUT.generation_summary.json` beside it). A `murgat run` folder holds
`run_summary.json`, the generation's `generation_summary.json`, `tables.md` / `tables.csv`,
`cache.sqlite`, and one folder per cell (`cell_folder(model, strategy)`) with the cell's
`responses.jsonl`, `scores.jsonl` and `summary.json`. `murgat meta-eval` writes
`meta_eval.json`.
"""

from __future__ import annotations

import pathlib

SCORES = "scores.jsonl"
RESPONSES = "responses.jsonl"
SUMMARY = "summary.json"
# Before it had its own name, a generation's summary was `summary.json` too (see
# `results.read_generation_summary`).
GENERATION_SUMMARY = "generation_summary.json"
META_EVAL = "meta_eval.json"
RUN_SUMMARY = "run_summary.json"
TABLES_MD = "tables.md"
TABLES_CSV = "tables.csv"
SCORE_CACHE = "verdicts.sqlite"
RUN_CACHE = "cache.sqlite"
ENGINE_LOG = "engine.log"
# A file written in place of its final name until the run completes.
PARTIAL_SUFFIX = ".partial"

# Between a cell folder's model and strategy. A model name never holds it: `/` and `:` in names
# are replaced (a model path `org/name` is folder `org_name__...`).
_CELL_SEP = "__"


def cell_label(model: str, strategy: str) -> str:
    """A grid cell as tables and run_summary.json name it: `model/strategy`."""
    return f"{model}/{strategy}"


def cell_folder(model: str, strategy: str) -> str:
    """The folder of a grid cell inside a `murgat run` folder."""
    return f"{model}{_CELL_SEP}{strategy}".replace("/", "_").replace(":", "-")


def parse_cell_folder(name: str) -> tuple[str, str] | None:
    """(model, strategy) a cell folder's name was built from, as far as its name tells (a model
    name's `/` and `:` were replaced); None for a folder that is not a cell's."""
    model, sep, strategy = name.partition(_CELL_SEP)
    if not sep or not model or not strategy:
        return None
    return model, strategy


def scores_file(run: pathlib.Path) -> pathlib.Path:
    """The score records of a `murgat score` folder, or `run` itself when it is a file."""
    return run / SCORES if run.is_dir() else run


def summary_beside(records: pathlib.Path) -> pathlib.Path:
    """The summary.json of the run a records file (or its folder) belongs to."""
    return (records if records.is_dir() else records.parent) / SUMMARY


def is_score_folder(folder: pathlib.Path) -> bool:
    return (folder / SCORES).is_file() and not (folder / RUN_SUMMARY).is_file()
