"""`murgat meta-eval --select`: the chosen judge per stage, and the chosen combination's MURGAT-S
correlation with people beside every run's, as the paper's judge table sets them."""

from __future__ import annotations

from rich.table import Table

from ..results import MetaEval
from ..results.meta_blocks import Candidate, Correlation, Selection
from .fit_table import _cell, _fmt


def _ci(ci) -> str:
    return "-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _judge(row: Candidate | None) -> str:
    if row is None:
        return "-"
    if not row.vote:
        return str(row.model)
    how = row.vote
    if row.weights:
        how += " " + ", ".join(f"{w:.2f}" for w in row.weights.values())
    return f"{row.model} ({how})"


def choices_table(selection: Selection) -> Table:
    t = Table(title="Judge per stage (best agreement on its subtask)")
    for col in ("stage", "judge", "statistic", "value", "n", "MURGAT-S r", "candidates"):
        t.add_column(col, justify="left" if col in ("stage", "judge", "statistic") else "right")
    for stage, row in selection.stages.items():
        t.add_row(
            _cell(stage),
            _cell(_judge(row)),
            _cell(row.statistic),
            _fmt(row.value),
            _fmt(row.n),
            _fmt(row.murgat_s_pearson),
            _fmt(row.candidates),
        )
    return t


def correlation_table(report: MetaEval) -> Table:
    """MURGAT-S against people: each run's judges as they ran, then the selected combination."""
    t = Table(title="MURGAT-S against human labels: each run and the selected combination")
    t.add_column("judges")
    for col in ("Pearson", "95% CI", "Spearman", "95% CI", "n"):
        t.add_column(col, justify="right", no_wrap=True)

    def add(name: str, ms: Correlation | None, style: str | None = None) -> None:
        ms = ms or Correlation()
        t.add_row(
            _cell(name),
            _fmt(ms.pearson),
            _ci(ms.pearson_ci),
            _fmt(ms.spearman),
            _ci(ms.spearman_ci),
            _fmt(ms.n),
            style=style,
        )

    for name, r in sorted((report.runs or {}).items(), key=lambda kv: -kv[1].pearson()):
        add(name, r.murgat_s)
    selection = report.selection
    if selection is not None and selection.combination is not None:
        judges = " | ".join(
            _judge(selection.choice(s)) for s in ("verifiable", "decompose", "entail")
        )
        add(f"selected: {judges}", selection.combination.murgat_s, style="bold")
    return t


__all__ = ["choices_table", "correlation_table"]
