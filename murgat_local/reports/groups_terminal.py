"""`--group-by` in the terminal: summary.json's `by_group` as one table per field."""

from __future__ import annotations

from rich.markup import escape

from ..results import Summary
from .fit_table import Col, FitTable, _cell, _fmt, _name

COLUMNS = (
    ("n", "responses"),
    ("ok", "scored"),
    ("err", "errors"),
    ("cov", "coverage"),
    ("prec", "precision"),
    ("rec", "recall"),
    ("F1", "f1"),
    ("MURGAT-S", "murgat_s"),
    ("QA", "qa_accuracy"),
)


def terminal_tables(summary: Summary) -> list[FitTable]:
    """One table per field of `by_group`: a row per group, as the summary table's columns; the
    group names stay whole at any width (see `FitTable`)."""
    out = []
    for field, groups in (summary.by_group or {}).items():
        # a field name comes from the data: shown as written, never read as markup
        t = FitTable(
            f"By {escape(str(field))}",
            [_name(escape(str(field)))] + [Col(header) for header, _ in COLUMNS],
        )
        for value, s in groups.items():
            t.add_row(_cell(value), *(_fmt(getattr(s, key)) for _, key in COLUMNS))
        out.append(t)
    return out
