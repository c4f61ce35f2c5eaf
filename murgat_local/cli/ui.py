"""The `murgat` app, its shared consoles and helpers, for the command modules beside it.

Command modules refer to `ui.console` / `ui.err` (this module) at call time: while engines log
to a file, those consoles are swapped for ones on the real terminal. The package's `__init__`
imports the command modules; they import this module, never the package, so no import goes
back up.
"""

from __future__ import annotations

import os
import pathlib
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from .. import offline
from .children import stop_children

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Score fact-level multimodal attribution (MURGAT) with local judges.",
)
console = Console()
err = Console(stderr=True)

USAGE_ERROR = 2


@app.callback()
def _invocation() -> None:
    # At invocation, not import: importing the package leaves the environment alone.
    offline.enforce()
    # vLLM's per-request INFO lines would bury the progress bars and the table.
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    # stdout is our output (tables, a dry run's JSON plan): engine logs, which vLLM writes to
    # stdout by default, go to stderr; engine processes inherit this.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")


def _error(message: str) -> None:
    """An error line; the message is text, never markup (paths and exceptions may hold `[`).
    One line at any width, as the terminal wraps it: a path in it is never cut in two."""
    err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)


def warn_judges(warnings) -> None:
    """summary.json's `warnings` about the judges, each printed once."""
    for w in dict.fromkeys(warnings or ()):
        err.print(f"[yellow]warning:[/yellow] {escape(w)}", soft_wrap=True)


def _fail(message: str) -> NoReturn:
    _error(message)
    raise typer.Exit(USAGE_ERROR)


def show_engine_logs(verbose: bool) -> None:
    """--verbose: engines log at INFO (they start later, and read this then)."""
    if verbose:
        os.environ["VLLM_LOGGING_LEVEL"] = "INFO"


P = ParamSpec("P")
T = TypeVar("T")


def set_up(make: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`make(...)`, which sets a run up and starts no model: a model or preset that cannot be
    found, or a setting it refuses (ValueError), is a usage error (exit 2)."""
    from ..engines import ModelNotFound

    try:
        return make(*args, **kwargs)
    except (ModelNotFound, ValueError) as e:
        _fail(str(e))


@contextmanager
def _engine_logs(out: pathlib.Path, quiet: bool) -> Iterator[None]:
    """When quiet, engines write to OUT/engine.log (OUT.engine.log for a file) while our
    consoles keep the terminal."""
    if not quiet:
        yield
        return
    from ..reports.logs import redirect_fds
    from ..results import layout

    global console, err
    log = (
        out.with_suffix("." + layout.ENGINE_LOG)
        if out.suffix == ".jsonl"
        else out / layout.ENGINE_LOG
    )
    # One line at any width: the path is copied whole from a narrow terminal or a CI log.
    err.print(
        f"[dim]engine logs: {escape(str(log))} (--verbose shows them here)[/dim]", soft_wrap=True
    )
    saved = console, err
    with redirect_fds(log) as terminal:
        console, err = Console(file=terminal.stdout), Console(file=terminal.stderr)
        try:
            yield
        finally:
            console, err = saved


class Interrupted(KeyboardInterrupt):
    """SIGTERM, delivered as an interrupt so every `finally` (engine shutdown) runs."""


@contextmanager
def _running(out: pathlib.Path, quiet: bool) -> Iterator[None]:
    """A run: engine logs to their file when quiet; an unexpected fault ends it with exit 1 and
    the reason (never a usage error); SIGINT / SIGTERM stop it cleanly.

    An interrupted run shuts its engines down, writes no final results (the partial file
    keeps its `.partial` name), keeps every batch already cached, and exits 130 (SIGINT) or
    143 (SIGTERM); the same command resumes it.
    """

    def on_term(signum, frame):
        raise Interrupted()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with _engine_logs(out, quiet):
            yield
    except typer.Exit:
        raise
    except Exception as e:  # anything but an item's fault: the run stops, resumable
        _error(
            f"the run stopped: {type(e).__name__}: {e}. Everything already judged or "
            "generated is cached: the same command resumes."
        )
        raise typer.Exit(1) from None
    except KeyboardInterrupt as e:
        sig = "SIGTERM" if isinstance(e, Interrupted) else "SIGINT"
        for line in stop_children():  # the engines' shutdown ran; what it left is ended here
            err.print(f"[dim]stopped a process the engines left: {escape(line)}[/dim]")
        err.print(
            f"[red]interrupted[/red] ({sig}): engines stopped, no final results written; "
            "finished batches are cached and the same command resumes."
        )
        raise typer.Exit(143 if isinstance(e, Interrupted) else 130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
