"""The `murgat` command line: one module per command group, each registering its commands on
`app` (defined, with the shared consoles and helpers, in `cli.ui`)."""

from .ui import app  # noqa: F401

from . import annotate, compare, dataset, generate, meta, program, report, score, serve, tools  # noqa: E402,F401  (each registers its commands on `app`)


def _one_line_summaries() -> None:
    """The command list shows each command's first paragraph; written over several lines in a
    docstring, rich keeps those breaks and the list reads ragged at any width. One line each,
    wrapped by rich to the terminal."""
    for info in app.registered_commands:
        doc = info.callback.__doc__ if info.callback else None
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.strip().split("\n\n")[0].split())


_one_line_summaries()
