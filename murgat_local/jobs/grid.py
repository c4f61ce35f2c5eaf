"""`murgat run`: generate, then score every cell, in one output folder, with one engine per
model shared by the responders, the answer judge and every cell's scorer, and one cache.

Set up (`Grid(...)`, nothing starts: a model that cannot be found is a usage error), then run
(`Grid.run`): the cells' summaries, the paper's table (OUT/tables.md, .csv) and
OUT/run_summary.json (`run_summary`).
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import RunConfig
from ..engines import close_all
from ..generate_config import GenerateConfig
from ..inputs.benchmarks import Dataset
from ..jsonl import write_json
from ..metrics.accuracy import taxes_by_model
from ..metrics.run_summary import GenerationGrades
from ..metrics.run_summary import RunSummary as ScoreSummary
from ..pipeline.generate_cells import GenerateResult
from ..pipeline.generating import GenerateRunner
from ..pipeline.runner import Runner
from ..reports import paper_table
from ..reports.paper_table import GridCell
from ..results import RunSummary, Summary, as_model, layout
from ..results.summaries import GenerationCell

# What a cell's row in run_summary.json's `grid` carries of its scoring summary: the scores.
# Its QA accuracy and counts are the generation's (one place); the scoring summary grades the
# same answers the same way, a response it could not score included (`_qa_differs` checks).
_SCORED = ("scored", "coverage", "precision", "recall", "f1", "murgat_s", "partial")


@dataclass
class GridResult:
    summary: RunSummary  # run_summary.json, as a reader of it gets it
    summary_path: pathlib.Path
    tables: Sequence[pathlib.Path]
    exit_code: int


class Grid:
    def __init__(
        self,
        generate: GenerateConfig,
        score: RunConfig,
        media_root: pathlib.Path,
        out: pathlib.Path,
    ):
        """ValueError / ModelNotFound for a bad grid or model; no engine starts."""
        if out.suffix == ".jsonl":
            raise ValueError("--out of `murgat run` is a folder")
        self.out = out
        self.generator = GenerateRunner(generate, media_root, out, grades=GenerationGrades())
        # One engine per model for everything: responders, answer judge and every cell's scorer.
        self.engines = dict(self.generator.engines)
        self.scorers: dict[str, Runner] = {}
        for cell in self.generator.cells:
            folder = self.generator.paths[cell].parent
            self.scorers[cell.label] = Runner(
                score, media_root, folder, engines=self.engines, summary=ScoreSummary
            )
            self.engines.update(self.scorers[cell.label].engines)

    def run(self, dataset: Dataset) -> GridResult:
        """Generate, score each cell, write the tables and run_summary.json; engines shut down."""
        grid: dict[str, dict] = {}
        cells: list[GridCell] = []
        warnings: list[str] = []  # about the judges, from each cell's scoring
        try:
            generated = self.generator.run(dataset)
            code = generated.exit_code
            for label, runner in self.scorers.items():
                scored = runner.run(generated.outputs[label])
                code = max(code, scored.exit_code)
                warnings += scored.summary.warnings or []
                cell = (generated.summary.cells or {})[label]
                grid[label] = {
                    **cell.model_dump(exclude_unset=True),
                    **{k: getattr(scored.summary, k) for k in _SCORED},
                    "scores": str(scored.records_path),
                }
                if (why := _qa_differs(cell, scored.summary)) is not None:
                    warnings.append(f"{label}: {why}")
                # the generation names every cell's model and strategy
                cells.append(GridCell(cell.model or "", cell.strategy or "", scored.summary))
        finally:
            self.generator.close(engines=False)
            for r in self.scorers.values():
                r.close()
            close_all(self.engines.values())
        tables = paper_table.write(self.out, cells)
        summary, path = run_summary(self.out, grid, cells, generated, tables, warnings)
        return GridResult(summary, path, tables, code)


def _qa_differs(cell: GenerationCell, summary: Summary) -> str | None:
    """Why a cell's scoring summary grades its answers otherwise than its generation did (None:
    it does not); never expected, since both grade the answers generate read."""
    graded = sum((summary.qa_graded or {}).values())
    ours = (cell.accuracy, cell.unanswered, cell.graded)
    theirs = (summary.qa_accuracy, summary.unanswered, graded)
    if ours == theirs:
        return None
    return (
        "QA accuracy, unanswered and graded are "
        f"{ours} in the generation summary but {theirs} in the cell's summary.json"
    )


def run_summary(
    out: pathlib.Path,
    grid: dict[str, dict],
    cells: Sequence[GridCell],
    generated: GenerateResult,
    tables: Sequence[pathlib.Path],
    warnings: list[str],
) -> tuple[RunSummary, pathlib.Path]:
    """OUT/run_summary.json, built and written here only: the grid's rows, the reasoning tax per
    model, the generation summary's path, the tables and the judges' warnings (each once)."""
    taxes = taxes_by_model((c.model, c.strategy, c.summary.qa_accuracy) for c in cells)
    summary = {
        "grid": grid,
        "reasoning_tax": taxes,
        "generation": str(generated.summary_path),
        "failure": generated.summary.failure,
        "tables": [str(p) for p in tables],
        "warnings": list(dict.fromkeys(warnings)),
    }
    path = out / layout.RUN_SUMMARY
    written = write_json(path, RunSummary.model_validate(summary))
    return as_model(RunSummary, written), path
