"""Terminal reports (rich): the summary table, each command's tables and per-stage progress.

Every table is a `FitTable` (`fit_table.py`): values from the input are shown as text, never
obeyed, and row names stay whole at the width the table is printed at.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..results import GenerationSummary, MetaEval, Numbers, RunSummary, Summary
from ..results.meta_blocks import Agreement, Binary, Correlation, FactMatch
from .fit_table import TEXT, VALUE, Col, FitTable, _cell, _fmt, _name


def _row(label: str, s: Numbers) -> list[str | Text]:
    return [
        _cell(label),
        *(_fmt(v) for v in (s.responses, s.scored, s.errors, s.partial)),
        *(_fmt(v) for v in (s.coverage, s.precision, s.recall, s.f1, s.murgat_s, s.qa_accuracy)),
    ]


def summary_table(summary: Summary, title: str = "MURGAT scores") -> FitTable:
    """One row for all responses, and one per evaluated model when there are several.

    `partial` counts responses scored on partial data (some verdicts missing; see each
    record's `scored_fraction`)."""
    t = FitTable(
        f"{title} ({summary.mode or 'default'} mode)",
        [_name("model")]
        + [
            Col(c)
            for c in ("n", "ok", "err", "partial", "cov", "prec", "rec", "F1", "MURGAT-S", "QA")
        ],
    )
    for name, numbers in (summary.by_model or {}).items():
        t.add_row(*_row(name, numbers))
    t.add_row(*_row("all", summary), style="bold")
    unread = summary.unparsed_citations
    if unread:  # such a sentence counts as uncited: say how often that happened
        t.caption = (
            f"unparsed citations: {unread} (text in brackets that looks like a citation and was "
            "not read as one; each sentence's `unparsed_citations`)"
        )
    return t


def _tax_caption(taxes: Mapping[str, float | None] | None) -> str | None:
    """The reasoning tax (accuracy of cite minus base) per model, under a grid's table."""
    return "; ".join(f"reasoning tax {m}: {_fmt(t)}" for m, t in (taxes or {}).items()) or None


def generation_table(summary: GenerationSummary) -> FitTable:
    """One row per cell of a generation grid: answers, accuracy and how answers were read."""
    t = FitTable(
        "Generation",
        [_name("cell")]
        + [Col(c) for c in ("rows", "err", "graded", "answered", "unanswered", "accuracy")]
        + [Col("paths", TEXT, "left")],
    )
    for label, c in (summary.cells or {}).items():
        paths = ", ".join(f"{k} {v}" for k, v in sorted((c.answer_paths or {}).items()))
        t.add_row(
            _cell(label),
            *(_fmt(v) for v in (c.rows, c.errors, c.graded, c.answered, c.unanswered)),
            _fmt(c.accuracy),
            _cell(paths),
        )
    t.caption = _tax_caption(summary.reasoning_tax)
    return t


def grid_table(summary: RunSummary) -> FitTable:
    """`murgat run`: accuracy beside MURGAT-S for every model x strategy cell."""
    t = FitTable(
        "Accuracy and attribution",
        [_name("cell")]
        + [
            Col(c)
            for c in ("n", "accuracy", "unanswered", "cov", "prec", "rec", "MURGAT-S", "partial")
        ],
    )
    for label, c in (summary.grid or {}).items():
        t.add_row(
            _cell(label),
            *(_fmt(v) for v in (c.rows, c.accuracy, c.unanswered, c.coverage, c.precision)),
            *(_fmt(v) for v in (c.recall, c.murgat_s, c.partial)),
        )
    t.caption = _tax_caption(summary.reasoning_tax)
    return t


def stages_table(summary: Summary) -> FitTable:
    t = FitTable(
        "Judge calls per stage",
        [_name("stage"), _name("model")]
        + [Col(c) for c in ("calls", "uniq", "cache", "run", "unparsed", "refused", "s")],
    )
    for stage, c in (summary.stages or {}).items():
        t.add_row(
            _cell(stage),
            _cell(summary.judge_of(stage) or ""),
            *(_fmt(v) for v in (c.calls, c.unique, c.cache_hits, c.model_calls)),
            *(_fmt(v) for v in (c.unparsed, c.errors)),
            f"{c.wall_s or 0.0:.1f}",
        )
    return t


def errors_table(summary: Summary, limit: int = 20) -> FitTable:
    """The responses that could not be scored: the first `limit` of the summary's `errors_list`."""
    errors = summary.errors_list or []
    t = FitTable(
        f"Items with errors ({len(errors)})",
        [
            Col("#", VALUE, "left"),
            _name("id"),
            Col("where", TEXT, "left"),
            Col("error", TEXT, "left"),
        ],
    )
    for e in errors[:limit]:
        t.add_row(_cell(e.index), _cell(e.id), _cell(e.source or ""), _cell(e.error))
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
        SpinnerColumn(),
        TextColumn("{task.description:<11}"),
        BarColumn(),
        TextColumn("{task.completed} calls"),
        RateColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
        disable=not console.is_terminal,
        # Engines log to the real descriptors (OUT/engine.log when quiet), never through the bar.
        redirect_stdout=False,
        redirect_stderr=False,
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


def meta_table(report: MetaEval) -> FitTable:
    """`murgat meta-eval`: one row per judge run, ranked by MURGAT-S correlation with people;
    `*` marks the best run per subtask."""
    t = FitTable(
        "Judges against human labels",
        [_name("run")]
        + [Col(c) for c in ("S1 bal.acc", "S2 F1", "S3 bal.acc", "MURGAT-S r", "95% CI", "n")],
    )

    def star(block: str, name: str, value) -> str | Text:
        cell = _fmt(value)
        return f"{cell} *" if report.best_run(block) == name and value is not None else cell

    rows: list[tuple[str, Agreement]] = list((report.runs or {}).items())
    rows.sort(key=lambda kv: -kv[1].pearson())
    if report.inter_annotator is not None:
        rows.append(("(annotator 2 vs 1)", report.inter_annotator))
    for name, r in rows:
        s1, s2, s3 = r.subtask1 or Binary(), r.subtask2 or FactMatch(), r.subtask3 or Binary()
        ms = r.murgat_s or Correlation()
        ci = ms.pearson_ci
        t.add_row(
            _cell(name),
            star("subtask1", name, s1.balanced_accuracy),
            star("subtask2", name, s2.f1),
            star("subtask3", name, s3.balanced_accuracy),
            star("murgat_s", name, ms.pearson),
            Text("-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"),
            _fmt(ms.n),
        )
    return t


SMOKE_RAW = 60  # characters of a verdict's raw text shown in the smoke table


def smoke_table(rows: list[dict], engine: str) -> FitTable:
    """`murgat smoke`: one row per model and modality probed. A failed or skipped row's reason
    is shown whole: in its cell when short, else as a numbered note under the table."""
    t = FitTable(
        f"Engine smoke test ({engine})",
        [
            _name("model"),
            _name("modality"),
            Col("verdict", VALUE, "left"),
            Col("raw", TEXT, "left"),
            Col("tokens in/out"),
        ],
    )
    for r in rows:
        raw = r["raw"] if r["verdict"] is None else r["raw"][:SMOKE_RAW]
        if len(raw) > SMOKE_RAW:
            t.notes.append(f"[{len(t.notes) + 1}] {r['model']}, {r['modality']}: {raw}")
            raw = f"see [{len(t.notes)}] below"
        t.add_row(
            _cell(r["model"]),
            _cell(r["modality"]),
            _fmt(r["verdict"]),
            _cell(raw),
            f"{r['prompt_tokens']}/{r['output_tokens']}",
        )
    return t


def presets_table(presets) -> FitTable:
    """`murgat models`: each preset, what it takes, where its weights are and whether they are."""
    t = FitTable(
        "Model presets",
        [
            _name("preset"),
            Col("modalities", TEXT, "left"),
            Col("present", VALUE, "left"),
            Col("path", TEXT, "left"),
        ],
    )
    for p in presets:
        present = (p.path / "config.json").is_file()
        t.add_row(
            _cell(p.name),
            ", ".join(sorted(p.modalities)),
            "yes" if present else "no",
            _cell(p.path),
        )
    return t
