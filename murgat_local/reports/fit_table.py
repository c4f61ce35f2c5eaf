"""The terminal table every report prints through (`FitTable`), and its safe cells.

Values that come from the input (ids, model names, error messages quoting it) are shown as
text, never obeyed: rich markup is not parsed, control and bidi characters are shown as escapes
(`\\x1b`, `\\u202e`) so they cannot move the cursor or reorder the line, a surrogate shows as
U+FFFD, and a value longer than `CELL_LIMIT` characters is cut. A table keeps its row names
whole at the width it is printed at: an 80-column pipe (a CI log, `| tee`) gets the same rows,
with less frame. Apart from `table.py`, which says what each command's table shows, because how
a table fits a terminal is shared by every report and changes on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.measure import Measurement
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


def _name(header: str) -> Col:
    return Col(header, NAME, "left")
