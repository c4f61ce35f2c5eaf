"""Terminal reports (rich): the summary table and per-stage progress.

Values that come from the input (ids, model names, error messages quoting it) are shown as
text, never obeyed: rich markup is not parsed, control and bidi characters are shown as escapes
(`\\x1b`, `\\u202e`) so they cannot move the cursor or reorder the line, a surrogate shows as
U+FFFD, and a value longer than `CELL_LIMIT` characters is cut.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..inputs.responses import replace_surrogates

CELL_LIMIT = 500
# C0 and C1 controls but tab and newline, line/paragraph separators, bidi marks and overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _cell(value) -> Text:
    """Any value as a table cell that shows what it is and does nothing to the terminal."""
    s = str(value)
    if len(s) > CELL_LIMIT:
        s = s[:CELL_LIMIT] + "…"
    s, _ = replace_surrogates(s)
    return Text(_UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s))


def _fmt(v) -> str | Text:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return _cell(v)


def _row(label: str, s: dict) -> list[str | Text]:
    return [_cell(label), _fmt(s["responses"]), _fmt(s["scored"]), _fmt(s["errors"]), _fmt(s.get("partial")),
            _fmt(s["coverage"]),
            _fmt(s["precision"]), _fmt(s["recall"]), _fmt(s["f1"]), _fmt(s["murgat_s"]),
            _fmt(s.get("qa_accuracy"))]


def summary_table(summary: dict, title: str = "MURGAT scores") -> Table:
    """One row for all responses, and one per evaluated model when there are several.

    `partial` counts responses scored on partial data (some verdicts missing; see each
    record's `scored_fraction`)."""
    t = Table(title=f"{title} ({summary.get('mode', 'default')} mode)")
    t.add_column("model")
    for col in ("n", "ok", "err", "partial", "cov", "prec", "rec", "F1", "MURGAT-S", "QA"):
        t.add_column(col, justify="right", no_wrap=True)
    for name, s in (summary.get("by_model") or {}).items():
        t.add_row(*_row(name, s))
    t.add_row(*_row("all", summary), style="bold")
    return t


def _tax_caption(summary: dict) -> str | None:
    """The reasoning tax (accuracy of cite minus base) per model, under a grid's table."""
    taxes = [f"reasoning tax {m}: {_fmt(t)}" for m, t in (summary.get("reasoning_tax") or {}).items()]
    return "; ".join(taxes) or None


def generation_table(summary: dict) -> Table:
    """One row per cell of a generation grid: answers, accuracy and how answers were read."""
    t = Table(title="Generation")
    for col in ("cell", "rows", "err", "graded", "answered", "unanswered", "accuracy", "paths"):
        t.add_column(col, justify="left" if col in ("cell", "paths") else "right", no_wrap=col != "paths")
    for label, c in summary.get("cells", {}).items():
        paths = ", ".join(f"{k} {v}" for k, v in sorted(c.get("answer_paths", {}).items()))
        t.add_row(label, _fmt(c["rows"]), _fmt(c["errors"]), _fmt(c["graded"]), _fmt(c["answered"]),
                  _fmt(c["unanswered"]), _fmt(c["accuracy"]), paths)
    t.caption = _tax_caption(summary)
    return t


def grid_table(summary: dict) -> Table:
    """`murgat run`: accuracy beside MURGAT-S for every model x strategy cell."""
    t = Table(title="Accuracy and attribution")
    for col in ("cell", "n", "accuracy", "unanswered", "cov", "prec", "rec", "MURGAT-S", "partial"):
        t.add_column(col, justify="left" if col == "cell" else "right", no_wrap=True)
    for label, c in summary.get("grid", {}).items():
        t.add_row(label, _fmt(c.get("rows")), _fmt(c.get("accuracy")), _fmt(c.get("unanswered")),
                  _fmt(c.get("coverage")), _fmt(c.get("precision")), _fmt(c.get("recall")),
                  _fmt(c.get("murgat_s")), _fmt(c.get("partial")))
    t.caption = _tax_caption(summary)
    return t


def stages_table(summary: dict) -> Table:
    t = Table(title="Judge calls per stage")
    for col in ("stage", "model", "calls", "uniq", "cache", "run", "unparsed", "refused", "s"):
        t.add_column(col, justify="right" if col not in ("stage", "model") else "left")
    models = summary.get("models", {})
    for stage, c in summary.get("stages", {}).items():
        t.add_row(_cell(stage), _cell(models.get(stage, "")), _fmt(c["calls"]), _fmt(c["unique"]), _fmt(c["cache_hits"]),
                  _fmt(c["model_calls"]), _fmt(c["unparsed"]), _fmt(c["errors"]), f"{c['wall_s']:.1f}")
    return t


def errors_table(errors: list[dict], limit: int = 20) -> Table:
    t = Table(title=f"Items with errors ({len(errors)})")
    for col in ("#", "id", "where", "error"):
        t.add_column(col)
    for e in errors[:limit]:
        t.add_row(_cell(e.get("index")), _cell(e.get("id")), _cell(e.get("source") or ""), _cell(e.get("error")))
    return t


class RateColumn(ProgressColumn):
    """Calls per second of the time the stage was actually busy (not of the whole run)."""

    def render(self, task) -> Text:
        busy = task.fields.get("busy_s") or 0
        if not busy or not task.completed:
            return Text("")
        return Text(f"{task.completed / busy:.1f} calls/s", style="cyan")


@contextmanager
def stage_progress(console: Console, stages: list[str]) -> Iterator:
    """A progress bar per stage; yields a factory stage -> callback(n_done, busy_s)."""
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description:<11}"), BarColumn(),
        TextColumn("{task.completed} calls"), RateColumn(), TimeElapsedColumn(),
        console=console, transient=False, disable=not console.is_terminal,
        # Engines log to the real descriptors (OUT/engine.log when quiet), never through the bar.
        redirect_stdout=False, redirect_stderr=False,
    )
    tasks = {}
    with progress:
        def factory(stage: str):
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=None, busy_s=0.0)

            def advance(n: int, busy_s: float) -> None:
                progress.update(tasks[stage], advance=n, busy_s=busy_s)

            return advance

        for s in stages:
            factory(s)
        yield factory


def meta_table(report: dict) -> Table:
    """`murgat meta-eval`: one row per judge run, ranked by MURGAT-S correlation with people;
    `*` marks the best run per subtask."""
    best = report.get("best") or {}
    t = Table(title="Judges against human labels")
    t.add_column("run")
    for col in ("S1 bal.acc", "S2 F1", "S3 bal.acc", "MURGAT-S r", "95% CI", "n"):
        t.add_column(col, justify="right", no_wrap=True)

    def star(block: str, name: str, value) -> str | Text:
        cell = _fmt(value)
        return f"{cell} *" if best.get(block) == name and value is not None else cell

    rows = list((report.get("runs") or {}).items())
    rows.sort(key=lambda kv: -(kv[1]["murgat_s"].get("pearson") or -2.0))
    if report.get("inter_annotator"):
        rows.append(("(annotator 2 vs 1)", report["inter_annotator"]))
    for name, r in rows:
        ci = r["murgat_s"].get("pearson_ci")
        t.add_row(_cell(name), star("subtask1", name, r["subtask1"].get("balanced_accuracy")),
                  star("subtask2", name, r["subtask2"].get("f1")),
                  star("subtask3", name, r["subtask3"].get("balanced_accuracy")),
                  star("murgat_s", name, r["murgat_s"].get("pearson")),
                  "-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]", _fmt(r["murgat_s"].get("n")))
    return t
