"""`--group-by` in the terminal: summary.json's `by_group` as one table per field."""

from __future__ import annotations

from typing import Mapping

from rich.table import Table

from .table import _cell, _fmt


def terminal_tables(summary: Mapping) -> list[Table]:
    """One table per field of `by_group`: a row per group, as the summary table's columns."""
    out = []
    for field, groups in (summary.get("by_group") or {}).items():
        t = Table(title=f"By {field}")
        for col in (field, "n", "ok", "err", "cov", "prec", "rec", "F1", "MURGAT-S", "QA"):
            t.add_column(col, justify="left" if col == field else "right")
        for value, s in groups.items():
            t.add_row(_cell(value), *(_fmt(s.get(k)) for k in ("responses", "scored", "errors", "coverage",
                                                                 "precision", "recall", "f1", "murgat_s",
                                                                 "qa_accuracy")))
        out.append(t)
    return out
