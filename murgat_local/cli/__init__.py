"""The `murgat` command line: one module per command group, each registering its commands on
`app` (defined, with the shared consoles and helpers, in `cli.ui`)."""

import inspect

from . import (  # noqa: F401  (each registers its commands on `app`)
    annotate,
    bundle,
    compare,
    cut,
    dataset,
    generate,
    meta,
    program,
    report,
    schema,
    score,
    serve,
    tools,
)
from .ui import app


def _reflowed_help() -> None:
    """Each command's help as paragraphs that rich wraps to the terminal. Typer keeps a
    docstring's single line breaks, so the help read ragged at 80 columns (a line break, then a
    half line); the command list shows the first paragraph on one line. A paragraph that starts
    with typer's verbatim mark (backspace) keeps its lines."""
    for info in app.registered_commands:
        doc = inspect.getdoc(info.callback) if info.callback else None
        if not doc or info.help is not None:
            continue
        paragraphs = [p if p.startswith("\b") else " ".join(p.split()) for p in doc.split("\n\n")]
        info.help = "\n\n".join(paragraphs)
        if info.short_help is None:
            info.short_help = paragraphs[0]


_reflowed_help()
