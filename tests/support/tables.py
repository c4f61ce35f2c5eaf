"""What a table looks like through a pipe."""

import io

from rich.console import Console


def shown(renderable, width: int = 80) -> list[str]:
    """What a pipe (CI log, `| tee`) shows: rich's width when it is not writing to a terminal."""
    console = Console(file=io.StringIO(), width=width, color_system=None)
    assert not console.is_terminal
    console.print(renderable)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    return lines
