"""`murgat run`'s tables.md and tables.csv from known summaries, checked against numbers written
out by hand."""

from __future__ import annotations

import csv
import io

from murgat_local.reports.paper_table import GridCell, markdown, points, reasoning_tax, rows, write
from murgat_local.results import Summary


def section(n, acc, cov, prec, rec, f1, ms, ci=None):
    s = {
        "scored": n,
        "qa_accuracy": acc,
        "coverage": cov,
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "murgat_s": ms,
    }
    for m, c in (ci or {}).items():
        s[f"{m}_ci"] = c
    return s


def grid_cell(model: str, strategy: str, summary: dict) -> GridCell:
    """A cell with its summary.json as `murgat run` reads it."""
    return GridCell(model, strategy, Summary.model_validate(summary))


M1_BASE = section(
    10,
    0.5,
    0.75,
    0.125,
    1 / 3,
    0.0125,
    None,
    {"qa_accuracy": [0.2, 0.8], "coverage": [0.6, 0.9], "precision": [0.05, 0.25]},
)
M1_CITE = section(10, 0.45, 1.0, 0.5, 0.5, 0.5, 0.5, {"murgat_s": [0.3125, 0.6875]})
M2_BASE = section(8, None, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_points_are_x100_with_one_decimal_rounded_half_up():
    assert [points(v) for v in (0.0125, 0.125, 1 / 3, 0.45 - 0.5, 1.0, 0, None)] == [
        "1.3",
        "12.5",
        "33.3",
        "-5.0",
        "100.0",
        "0.0",
        "-",
    ]


def test_one_benchmark_one_row_per_model_and_strategy_with_the_reasoning_tax(tmp_path):
    cells = [
        grid_cell("m1", "base", M1_BASE),
        grid_cell("m1", "cite", M1_CITE),
        grid_cell("m2", "base", M2_BASE),
    ]
    md, sheet = write(tmp_path, cells)
    assert (
        md.read_text()
        == """# MURGAT results

Means over responses x100 (one decimal), each with its 95% bootstrap interval [low, high], from each cell's summary.json.

| Model | Strategy | n | QA acc. | Coverage | Precision | Recall | F1 | MURGAT-S |
|---|---|---|---|---|---|---|---|---|
| m1 | base | 10 | 50.0 [20.0, 80.0] | 75.0 [60.0, 90.0] | 12.5 [5.0, 25.0] | 33.3 | 1.3 | - |
| m1 | cite | 10 | 45.0 | 100.0 | 50.0 | 50.0 | 50.0 | 50.0 [31.3, 68.8] |
| m2 | base | 8 | - | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |

## Reasoning tax

QA accuracy under `cite` minus under `base`, in points (x100).

| Model | base | cite | tax |
|---|---|---|---|
| m1 | 50.0 | 45.0 | -5.0 |
"""
    )
    table = list(csv.reader(io.StringIO(sheet.read_text())))
    assert table[0] == [
        "model",
        "strategy",
        "n",
        "qa_accuracy",
        "qa_accuracy_low",
        "qa_accuracy_high",
        "coverage",
        "coverage_low",
        "coverage_high",
        "precision",
        "precision_low",
        "precision_high",
        "recall",
        "recall_low",
        "recall_high",
        "f1",
        "f1_low",
        "f1_high",
        "murgat_s",
        "murgat_s_low",
        "murgat_s_high",
        "reasoning_tax",
    ]
    assert table[1] == [
        "m1",
        "base",
        "10",
        "50.0",
        "20.0",
        "80.0",
        "75.0",
        "60.0",
        "90.0",
        "12.5",
        "5.0",
        "25.0",
        "33.3",
        "",
        "",
        "1.3",
        "",
        "",
        "",
        "",
        "",
        "-5.0",
    ]
    assert table[2][-4:] == ["50.0", "31.3", "68.8", "-5.0"]
    assert table[3] == [
        "m2",
        "base",
        "8",
        "",
        "",
        "",
        "0.0",
        "",
        "",
        "0.0",
        "",
        "",
        "0.0",
        "",
        "",
        "0.0",
        "",
        "",
        "0.0",
        "",
        "",
        "",
    ]
    assert len(table) == 4


def test_several_benchmarks_give_a_row_per_benchmark_and_a_tax_per_benchmark():
    def cell(strategy, ws_acc, vm_acc):
        return grid_cell(
            "m1",
            strategy,
            {
                **section(3, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25),
                "by_group": {
                    "benchmark": {
                        "worldsense": section(
                            2, ws_acc, 1.0, 1.0, 1.0, 1.0, 1.0, {"murgat_s": [1.0, 1.0]}
                        ),
                        "videommmu": section(1, vm_acc, 0.0, 0.0, 0.0, 0.0, 0.0),
                    }
                },
            },
        )

    cells = [cell("base", 0.5, 1.0), cell("cite", 0.25, 1.0)]
    table = rows(cells)
    assert [(r["strategy"], r["benchmark"], r["n"]) for r in table] == [
        ("base", "videommmu", 1),
        ("base", "worldsense", 2),
        ("cite", "videommmu", 1),
        ("cite", "worldsense", 2),
    ]
    tax = reasoning_tax(table)
    assert [(t["benchmark"], t["tax"]) for t in tax] == [("videommmu", 0.0), ("worldsense", -0.25)]
    text = markdown(table, tax)
    assert "| Model | Strategy | Benchmark | n |" in text
    assert (
        "| m1 | base | worldsense | 2 | 50.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 [100.0, 100.0] |"
        in text
    )
    assert "| m1 | worldsense | 50.0 | 25.0 | -25.0 |" in text
    # one benchmark named, or none: no benchmark column
    single = [
        grid_cell("m1", "base", {**M1_BASE, "by_group": {"benchmark": {"worldsense": M1_BASE}}})
    ]
    assert rows(single)[0]["benchmark"] is None and "Benchmark" not in markdown(rows(single), [])


def test_names_cannot_break_the_markdown_table():
    text = markdown(rows([grid_cell("a|b", "base\nx", M2_BASE)]), [])
    assert (
        "| a\\|b | base x | 8 |" in text
        and "No model was run under both `base` and `cite`." in text
    )
