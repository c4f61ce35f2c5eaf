"""What murgat writes, as typed models with a `schema_version`, the one reader of them, and the
layout of a run folder. The lowest layer: it knows pydantic and nothing of murgat's own."""

from . import layout
from .comparison import Comparison
from .read import (
    ReadError,
    read_comparison,
    read_generation_records,
    read_generation_summary,
    read_json_object,
    read_meta_eval,
    read_objects,
    read_run_summary,
    read_score_lines,
    read_score_records,
    read_summary,
)
from .records import GenerationRecord, ScoreRecord, Verdict
from .summaries import GenerationSummary, MetaEval, RunSummary, Summary
from .summary_blocks import Numbers
from .versions import CURRENT, Versioned, as_model

# `murgat schema NAME`: the files' schemas by the names the docs give them.
SCHEMAS: dict[str, type[Versioned]] = {
    "score-record": ScoreRecord,
    "generation-record": GenerationRecord,
    "summary": Summary,
    "generation-summary": GenerationSummary,
    "run-summary": RunSummary,
    "meta-eval": MetaEval,
    "comparison": Comparison,
}

__all__ = [
    "CURRENT",
    "SCHEMAS",
    "Comparison",
    "GenerationRecord",
    "GenerationSummary",
    "MetaEval",
    "Numbers",
    "ReadError",
    "RunSummary",
    "ScoreRecord",
    "Summary",
    "Verdict",
    "as_model",
    "layout",
    "read_comparison",
    "read_generation_records",
    "read_generation_summary",
    "read_json_object",
    "read_meta_eval",
    "read_objects",
    "read_run_summary",
    "read_score_lines",
    "read_score_records",
    "read_summary",
]
