"""The `murgat` command line: one module per command group, each registering its commands on
`app` (defined, with the shared consoles and helpers, in `cli.ui`)."""

from .ui import app  # noqa: F401

from . import annotate, compare, dataset, generate, meta, program, report, score, serve, tools  # noqa: E402,F401  (each registers its commands on `app`)
