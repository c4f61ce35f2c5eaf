"""The paper's table, from the summaries of a `murgat run` grid: `tables.md` and `tables.csv`.

One row per model x strategy, and per benchmark when the records name several (each cell's
summary.json `by_group.benchmark`); QA accuracy, coverage, attribution precision, recall, F1 and
MURGAT-S as the paper prints them: x100, one decimal (half up), each with its 95% interval
`[low, high]`; and the reasoning tax per model (and benchmark): accuracy under `cite` minus
accuracy under `base`, in points. Every number is one of summary.json's, scaled.
"""

from __future__ import annotations

import csv
import io
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ..metrics.accuracy import WITH, WITHOUT, reasoning_taxes
from ..metrics.groups import NO_VALUE
from ..results import Numbers, Summary, layout

COLUMNS = (
    ("qa_accuracy", "QA acc."),
    ("coverage", "Coverage"),
    ("precision", "Precision"),
    ("recall", "Recall"),
    ("f1", "F1"),
    ("murgat_s", "MURGAT-S"),
)


@dataclass(frozen=True)
class GridCell:
    model: str
    strategy: str
    summary: Summary  # the cell's summary.json


def points(v: float | None) -> str:
    """`v` x100 with one decimal, rounded half up on its shortest decimal form ('-' when None)."""
    if v is None:
        return "-"
    return str((Decimal(repr(float(v))) * 100).quantize(Decimal("0.1"), ROUND_HALF_UP))


def _by_benchmark(summary: Summary) -> dict[str, Numbers]:
    """summary.json's `by_group.benchmark`: the summary's numbers per benchmark."""
    # `by_group` is keyed by the `--group-by` fields the run was given
    return summary.groups("benchmark")


def _benchmarks(cells: Iterable[GridCell]) -> list[str]:
    found = {b for c in cells for b in _by_benchmark(c.summary)}
    return sorted(found, key=lambda b: (b == NO_VALUE, b))


def rows(cells: Sequence[GridCell]) -> list[dict]:
    """The table's rows: model, strategy, benchmark (None for one benchmark), n (scored
    responses), and per metric its mean and `<metric>_ci` (fractions, as in summary.json)."""
    benchmarks = _benchmarks(cells)
    out = []
    for c in cells:
        if len(benchmarks) > 1:
            groups = _by_benchmark(c.summary)
            sections: list[tuple[str | None, Numbers]] = [
                (b, groups[b]) for b in benchmarks if b in groups
            ]
        else:
            sections = [(None, c.summary)]
        for benchmark, s in sections:
            out.append(
                {
                    "model": c.model,
                    "strategy": c.strategy,
                    "benchmark": benchmark,
                    "n": s.scored,
                    **{k: getattr(s, k) for m, _ in COLUMNS for k in (m, f"{m}_ci")},
                }
            )
    return out


def reasoning_tax(table: Sequence[Mapping]) -> list[dict]:
    """Per model (and benchmark) with both a `base` and a `cite` row: their accuracies and the
    tax (`metrics.accuracy.reasoning_taxes`)."""
    taxes = reasoning_taxes(
        ((r["model"], r["benchmark"]), r["strategy"], r["qa_accuracy"]) for r in table
    )
    return [
        {"model": model, "benchmark": benchmark, **t} for (model, benchmark), t in taxes.items()
    ]


def _with_ci(value, ci) -> str:
    if value is None or not ci:
        return points(value)
    return f"{points(value)} [{points(ci[0])}, {points(ci[1])}]"


def _md(text) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(table: Sequence[Mapping], tax: Sequence[Mapping]) -> str:
    several = any(r["benchmark"] is not None for r in table)
    head = [
        "Model",
        "Strategy",
        *(["Benchmark"] if several else []),
        "n",
        *(label for _, label in COLUMNS),
    ]
    lines = [
        "# MURGAT results",
        "",
        "Means over responses x100 (one decimal), each with its 95% bootstrap interval [low, high], "
        "from each cell's summary.json.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for r in table:
        cells = [
            r["model"],
            r["strategy"],
            *([r["benchmark"]] if several else []),
            "-" if r["n"] is None else r["n"],
            *(_with_ci(r[m], r[f"{m}_ci"]) for m, _ in COLUMNS),
        ]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    lines += ["", "## Reasoning tax", ""]
    if not tax:
        lines.append(f"No model was run under both `{WITHOUT}` and `{WITH}`.")
    else:
        lines += [f"QA accuracy under `{WITH}` minus under `{WITHOUT}`, in points (x100).", ""]
        head = ["Model", *(["Benchmark"] if several else []), WITHOUT, WITH, "tax"]
        lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for t in tax:
            cells = [
                t["model"],
                *([t["benchmark"]] if several else []),
                points(t["base"]),
                points(t["cite"]),
                points(t["tax"]),
            ]
            lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def csv_text(table: Sequence[Mapping], tax: Sequence[Mapping]) -> str:
    """One line per row; numbers x100 with one decimal, empty when unknown; `reasoning_tax` is
    the row's model's (and benchmark's)."""
    several = any(r["benchmark"] is not None for r in table)
    taxes = {(t["model"], t["benchmark"]): t["tax"] for t in tax}

    def num(v) -> str:
        return "" if v is None else points(v)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "model",
            "strategy",
            *(["benchmark"] if several else []),
            "n",
            *(k for m, _ in COLUMNS for k in (m, f"{m}_low", f"{m}_high")),
            "reasoning_tax",
        ]
    )
    for r in table:
        values = []
        for m, _ in COLUMNS:
            ci = r[f"{m}_ci"] or (None, None)
            values += [num(r[m]), num(ci[0]), num(ci[1])]
        w.writerow(
            [
                r["model"],
                r["strategy"],
                *([r["benchmark"]] if several else []),
                "" if r["n"] is None else r["n"],
                *values,
                num(taxes.get((r["model"], r["benchmark"]))),
            ]
        )
    return buf.getvalue()


def write(folder: pathlib.Path, cells: Sequence[GridCell]) -> tuple[pathlib.Path, pathlib.Path]:
    """Write `folder/tables.md` and `folder/tables.csv`; returns their paths."""
    table = rows(cells)
    tax = reasoning_tax(table)
    md, sheet = folder / layout.TABLES_MD, folder / layout.TABLES_CSV
    md.write_text(markdown(table, tax), encoding="utf-8")
    sheet.write_text(csv_text(table, tax), encoding="utf-8", newline="")
    return md, sheet
