"""`murgat generate`'s grid and outputs: a cell (a model under a strategy), a dataset item as the
runner prepared it, where each cell's responses and the summary go, and the result of a run."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

from ..generate.strategies import Strategy
from ..inputs.datasets import DatasetItem
from ..inputs.responses import InputError
from ..media.source import MediaRef
from ..results import GenerationSummary, layout
from ..results.summary_blocks import GenerationError


@dataclass(frozen=True)
class Cell:
    model: str
    strategy: Strategy

    @property
    def label(self) -> str:
        return layout.cell_label(self.model, self.strategy.label)

    @property
    def folder(self) -> str:
        return layout.cell_folder(self.model, self.strategy.label)


@dataclass
class GenerateResult:
    summary: GenerationSummary  # generation_summary.json, as a reader of it gets it
    summary_path: pathlib.Path
    outputs: dict[str, pathlib.Path]  # cell label -> responses.jsonl
    errors: list[GenerationError] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors or self.summary.failure else 0


@dataclass
class Item:
    """A dataset item as the runner prepared it: its video opened, or the reason it could not be."""

    item: DatasetItem | InputError
    ref: MediaRef | None = None
    error: str | None = None

    @property
    def data(self) -> DatasetItem:
        """The dataset item, of an item that was read (one asked for only without `error`)."""
        if isinstance(self.item, InputError):
            raise ValueError(f"item {self.item.id!r} was not read: {self.item.reason}")
        return self.item

    @property
    def video(self) -> MediaRef:
        """The item's video, of an item that was prepared (one asked for only without `error`)."""
        if self.ref is None:
            raise ValueError(f"item {self.item.id!r} has no video: {self.error}")
        return self.ref


def output_layout(
    out: pathlib.Path, cells: list[Cell]
) -> tuple[dict[Cell, pathlib.Path], pathlib.Path, pathlib.Path]:
    """(cell -> responses file, summary file, default cache) for `--out`: one cell may write a
    `.jsonl` file directly; otherwise `out` is a folder with one subfolder per cell."""
    if out.suffix == ".jsonl":
        if len(cells) != 1:
            raise ValueError(
                f"--out {out} is one file, but the grid has {len(cells)} cells: give a folder"
            )
        summary = out.with_suffix(f".{layout.GENERATION_SUMMARY}")
        return {cells[0]: out}, summary, out.with_suffix(".cache.sqlite")
    return (
        {c: out / c.folder / layout.RESPONSES for c in cells},
        out / layout.GENERATION_SUMMARY,
        out / layout.RUN_CACHE,
    )
