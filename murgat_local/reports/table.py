"""Terminal reports (rich): the summary table and per-stage progress.

Values that come from the input (ids, model names, error messages quoting it) are shown as
text, never obeyed: rich markup is not parsed, control and bidi characters are shown as escapes
(`\\x1b`, `\\u202e`) so they cannot move the cursor or reorder the line, a surrogate shows as
U+FFFD, and a value longer than `CELL_LIMIT` characters is cut.

Every table keeps its row names whole at the width it is printed at (`FitTable`): an 80-column
pipe (a CI log, `| tee`) gets the same rows, with less frame.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from ..inputs.responses import replace_surrogates

CELL_LIMIT = 500
# C0 and C1 controls but tab and newline, line/paragraph separators, bidi marks and overrides.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


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


NAME, VALUE, TEXT = "name", "value", "text"


@dataclass(frozen=True)
class Col:
    """A column: `NAME` holds what a row is about (a model, a stage, an id) and is never cut;
    `VALUE` a short value (a number, a verdict), never wrapped; `TEXT` free text (an error,
    a path) that wraps to the width left."""

    header: str
    kind: str = VALUE
    justify: JustifyMethod = "right"


# Frames from the fullest to the leanest: rich's box; a rule under the header and two spaces
# between columns; one space between columns.
_FRAMES: tuple[dict, ...] = (
    {},
    {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False, "collapse_padding": True},
    {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False, "padding": (0, 0)},
)
_TEXT_FLOOR = (
    12  # free text narrower than this (or than its longest word) is worth less than a frame
)
_UNBOUNDED = 100_000


class FitTable:
    """A rich table that keeps its row names whole at the width it is printed at.

    It is rich's boxed table wherever that fits with every name and value whole. Narrower (an
    80-column pipe) the frame gives way first: the leanest frame that fits is used. When none
    does, the longest names wrap inside their column, broken after a `/`, `:`, `-`, `_`, `.` or
    space where one is near (a name is never cut to `…`); free text wraps at any width.
    """

    def __init__(self, title: str, columns: list[Col], caption: str | None = None):
        self.title = title
        self.columns = columns
        self.caption = caption
        self.rows: list[tuple[tuple, str | None]] = []
        # Long free text printed under the table, each line whole at the terminal's width: a
        # paragraph inside a cell would wrap into a column of one or two words a line.
        self.notes: list[str] = []

    def add_row(self, *cells, style: str | None = None) -> None:
        self.rows.append((cells, style))

    def table(
        self,
        frame: dict | None = None,
        *,
        floors: dict[int, int] | None = None,
        names: dict[int, int] | None = None,
    ) -> Table:
        """The rich table in `frame`. `floors`: columns held to these widths (to measure what the
        rest needs); `names`: name columns of these widths, their names broken onto lines."""
        floors, names = floors or {}, names or {}
        t = Table(
            title=self.title, caption=_cell(self.caption) if self.caption else None, **(frame or {})
        )
        for i, c in enumerate(self.columns):
            wraps = c.kind == TEXT or i in names
            t.add_column(
                c.header,
                justify=c.justify,
                no_wrap=not wraps,
                overflow="fold" if wraps else "ellipsis",
                width=names.get(i),
                max_width=floors.get(i),
            )
        for cells, style in self.rows:
            t.add_row(
                *(_broken(cell, names[i]) if i in names else cell for i, cell in enumerate(cells)),
                style=style,
            )
        return t

    def fitted(self, console: Console, options: ConsoleOptions) -> Table:
        """The fullest frame in which every name and value is whole and free text keeps at
        least its longest word (up to `_TEXT_FLOOR`); else the leanest, its names broken."""
        wide = options.update_width(_UNBOUNDED)

        def width(frame: dict, floors: dict[int, int]) -> int:
            return Measurement.get(console, wide, self.table(frame, floors=floors)).maximum

        def widest(i: int) -> int:
            column = [cells[i] for cells, _ in self.rows] + [self.columns[i].header]
            return max(Measurement.get(console, wide, cell).maximum for cell in column)

        floors = {}
        for i, c in enumerate(self.columns):
            if c.kind == TEXT:
                words = [Measurement.get(console, wide, cells[i]).minimum for cells, _ in self.rows]
                floors[i] = min(_TEXT_FLOOR, max(words + [len(c.header)]))
        for frame in _FRAMES:
            if width(frame, floors) <= options.max_width:
                return self.table(frame)
        # The leanest frame, and what is left of the width for the names: the widest give way first.
        names = {i: widest(i) for i, c in enumerate(self.columns) if c.kind == NAME}
        budget = options.max_width - (
            width(_FRAMES[-1], {**floors, **dict.fromkeys(names, 1)}) - len(names)
        )
        while names and sum(names.values()) > budget:
            i = max(names, key=lambda k: names[k])
            if names[i] <= _NAME_FLOOR:
                break
            names[i] -= 1
        return self.table(_FRAMES[-1], names=names)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.fitted(console, options)
        for note in self.notes:
            yield _cell(note)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.fitted(console, options))


_NAME_FLOOR = 8
_BREAK_AFTER = re.compile(r"[/:\-_.,@ ]")


def _broken(cell, width: int) -> Text:
    """A name over lines of at most `width` characters, each ending where the name has a
    separator when one is in the line's second half."""
    text = cell if isinstance(cell, Text) else Text(str(cell))
    rest, lines = text.plain, []
    while len(rest) > width:
        cuts = [m.end() for m in _BREAK_AFTER.finditer(rest, 0, width)]
        cut = cuts[-1] if cuts and cuts[-1] > width // 2 else width
        lines.append(rest[:cut])
        rest = rest[cut:]
    return Text("\n".join(lines + [rest]), style=text.style)


def _row(label: str, s: dict) -> list[str | Text]:
    return [
        _cell(label),
        _fmt(s["responses"]),
        _fmt(s["scored"]),
        _fmt(s["errors"]),
        _fmt(s.get("partial")),
        _fmt(s["coverage"]),
        _fmt(s["precision"]),
        _fmt(s["recall"]),
        _fmt(s["f1"]),
        _fmt(s["murgat_s"]),
        _fmt(s.get("qa_accuracy")),
    ]


def _name(header: str) -> Col:
    return Col(header, NAME, "left")


def summary_table(summary: dict, title: str = "MURGAT scores") -> FitTable:
    """One row for all responses, and one per evaluated model when there are several.

    `partial` counts responses scored on partial data (some verdicts missing; see each
    record's `scored_fraction`)."""
    t = FitTable(
        f"{title} ({summary.get('mode', 'default')} mode)",
        [_name("model")]
        + [
            Col(c)
            for c in ("n", "ok", "err", "partial", "cov", "prec", "rec", "F1", "MURGAT-S", "QA")
        ],
    )
    for name, s in (summary.get("by_model") or {}).items():
        t.add_row(*_row(name, s))
    t.add_row(*_row("all", summary), style="bold")
    return t


def _tax_caption(summary: dict) -> str | None:
    """The reasoning tax (accuracy of cite minus base) per model, under a grid's table."""
    taxes = [
        f"reasoning tax {m}: {_fmt(t)}" for m, t in (summary.get("reasoning_tax") or {}).items()
    ]
    return "; ".join(taxes) or None


def generation_table(summary: dict) -> FitTable:
    """One row per cell of a generation grid: answers, accuracy and how answers were read."""
    t = FitTable(
        "Generation",
        [_name("cell")]
        + [Col(c) for c in ("rows", "err", "graded", "answered", "unanswered", "accuracy")]
        + [Col("paths", TEXT, "left")],
    )
    for label, c in summary.get("cells", {}).items():
        paths = ", ".join(f"{k} {v}" for k, v in sorted(c.get("answer_paths", {}).items()))
        t.add_row(
            _cell(label),
            _fmt(c["rows"]),
            _fmt(c["errors"]),
            _fmt(c["graded"]),
            _fmt(c["answered"]),
            _fmt(c["unanswered"]),
            _fmt(c["accuracy"]),
            _cell(paths),
        )
    t.caption = _tax_caption(summary)
    return t


def grid_table(summary: dict) -> FitTable:
    """`murgat run`: accuracy beside MURGAT-S for every model x strategy cell."""
    t = FitTable(
        "Accuracy and attribution",
        [_name("cell")]
        + [
            Col(c)
            for c in ("n", "accuracy", "unanswered", "cov", "prec", "rec", "MURGAT-S", "partial")
        ],
    )
    for label, c in summary.get("grid", {}).items():
        t.add_row(
            _cell(label),
            _fmt(c.get("rows")),
            _fmt(c.get("accuracy")),
            _fmt(c.get("unanswered")),
            _fmt(c.get("coverage")),
            _fmt(c.get("precision")),
            _fmt(c.get("recall")),
            _fmt(c.get("murgat_s")),
            _fmt(c.get("partial")),
        )
    t.caption = _tax_caption(summary)
    return t


def stages_table(summary: dict) -> FitTable:
    t = FitTable(
        "Judge calls per stage",
        [_name("stage"), _name("model")]
        + [Col(c) for c in ("calls", "uniq", "cache", "run", "unparsed", "refused", "s")],
    )
    models = summary.get("models", {})
    for stage, c in summary.get("stages", {}).items():
        t.add_row(
            _cell(stage),
            _cell(models.get(stage, "")),
            _fmt(c["calls"]),
            _fmt(c["unique"]),
            _fmt(c["cache_hits"]),
            _fmt(c["model_calls"]),
            _fmt(c["unparsed"]),
            _fmt(c["errors"]),
            f"{c['wall_s']:.1f}",
        )
    return t


def errors_table(errors: list[dict], limit: int = 20) -> FitTable:
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
        t.add_row(
            _cell(e.get("index")),
            _cell(e.get("id")),
            _cell(e.get("source") or ""),
            _cell(e.get("error")),
        )
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


def meta_table(report: dict) -> FitTable:
    """`murgat meta-eval`: one row per judge run, ranked by MURGAT-S correlation with people;
    `*` marks the best run per subtask."""
    best = report.get("best") or {}
    t = FitTable(
        "Judges against human labels",
        [_name("run")]
        + [Col(c) for c in ("S1 bal.acc", "S2 F1", "S3 bal.acc", "MURGAT-S r", "95% CI", "n")],
    )

    def star(block: str, name: str, value) -> str | Text:
        cell = _fmt(value)
        return f"{cell} *" if best.get(block) == name and value is not None else cell

    rows = list((report.get("runs") or {}).items())
    rows.sort(key=lambda kv: -(kv[1]["murgat_s"].get("pearson") or -2.0))
    if report.get("inter_annotator"):
        rows.append(("(annotator 2 vs 1)", report["inter_annotator"]))
    for name, r in rows:
        ci = r["murgat_s"].get("pearson_ci")
        t.add_row(
            _cell(name),
            star("subtask1", name, r["subtask1"].get("balanced_accuracy")),
            star("subtask2", name, r["subtask2"].get("f1")),
            star("subtask3", name, r["subtask3"].get("balanced_accuracy")),
            star("murgat_s", name, r["murgat_s"].get("pearson")),
            Text("-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"),
            _fmt(r["murgat_s"].get("n")),
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
