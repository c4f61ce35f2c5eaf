"""`murgat annotate`: a local page where people label responses for the three subtasks."""

from __future__ import annotations

import os
import pathlib

import typer

from . import ui
from .ui import app

TOKEN_ENV = "MURGAT_ANNOTATE_TOKEN"
MIN_TOKEN = 16


def _annotator(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 100 or any(ord(c) < 32 or ord(c) == 127 for c in name):
        ui._fail("--annotator takes a name of 1 to 100 printable characters")
    return name


@app.command("annotate")
def annotate(
    source: pathlib.Path = typer.Argument(..., help="a `murgat score` folder, or a responses file"),
    media_root: pathlib.Path = typer.Option(
        ..., "--media-root", help="the folder the videos are named under"
    ),
    labels: pathlib.Path = typer.Option(
        ..., "--labels", help="labels JSONL to write (the human:PATH format)"
    ),
    annotator: str = typer.Option(
        ..., "--annotator", help="who is labelling (one session per name)"
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help=f"address to serve on; off loopback {TOKEN_ENV} is required"
    ),
    port: int = typer.Option(8765, "--port", help="port (0: any free one)"),
    show_judge: bool = typer.Option(
        False, "--show-judge", help="show the run's judge proposals (labels say so)"
    ),
    export: bool = typer.Option(
        False, "--export", help="write LABELS from the store and exit (no server)"
    ),
    overlap: int | None = typer.Option(
        None, "--overlap", help="K responses everyone labels; the rest are split"
    ),
    store: pathlib.Path | None = typer.Option(
        None, "--store", help="the answers store (default: annotate.sqlite beside LABELS)"
    ),
    responses: pathlib.Path | None = typer.Option(
        None, "--responses", help="a run folder's input, when it has moved"
    ),
    resamples: int = typer.Option(
        10_000, "--resamples", help="bootstrap resamples of the agreement view"
    ),
    abstained: bool = typer.Option(
        False,
        "--abstained",
        help="ask exactly the verdicts SOURCE (a `murgat score --escalate-to` run) abstained on",
    ),
    order: str | None = typer.Option(
        None,
        "--order",
        help="random (a new store's default: a seeded random order, the seed written into the "
        "labels) or file (the source's order); fixed when the store starts",
    ),
    order_seed: int | None = typer.Option(
        None, "--order-seed", help="the seed of the random order (default 0)"
    ),
) -> None:
    """Label responses: verifiability, atomic facts, entailment and necessity of each citation."""
    from ..annotate.open import CannotOpen, open_session

    annotator = _annotator(annotator)
    token = _token(host, export)
    try:
        opened = open_session(
            source,
            media_root,
            labels,
            annotator,
            store=store,
            responses=responses,
            abstained=abstained,
            show_judge=show_judge,
            overlap=overlap,
            hold=not export,
            order=order,
            order_seed=order_seed,
        )
    except CannotOpen as e:
        ui._fail(str(e))
    for u in opened.source.unusable:
        ui._error(f"{u.source}{f' ({u.id})' if u.id else ''}: {u.reason}; not asked")
    session = opened.session
    if export:
        try:
            written, left = session.export()
        finally:
            session.release()
        _report(labels, written, left)
        return
    _serve(opened, labels, annotator, host, port, token, resamples)


def _token(host: str, export: bool) -> str | None:
    """The page's token (MURGAT_ANNOTATE_TOKEN); required off loopback."""
    from ..annotate.server import is_loopback

    token = os.environ.get(TOKEN_ENV) or None
    if token is not None and len(token) < MIN_TOKEN:
        ui._fail(f"{TOKEN_ENV} must hold at least {MIN_TOKEN} characters")
    if not export and not is_loopback(host) and token is None:
        ui._fail(
            f"--host {host} is not a loopback address: set {TOKEN_ENV} (every request must then carry it)"
        )
    return token


def _serve(opened, labels, annotator, host, port, token, resamples) -> None:
    """Serve the page until stopped; the labels are written as answers come and at the end."""
    from ..annotate.server import bind, serve

    session = opened.session
    try:
        sock = bind(host, port)
    except OSError as e:
        session.close()
        ui._fail(f"cannot listen on {host}:{port} ({e.strerror or e})")
    bound = sock.getsockname()
    where = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    session.export()
    session.start_writer()
    extra = f" (open /?token=<{TOKEN_ENV}> once)" if token else ""
    _say(
        f"murgat annotate: http://{where}:{bound[1]}/{extra} for {annotator}, "
        f"{len(opened.source.items)} responses, store {opened.store_path}"
    )
    try:
        serve(session, sock, token=token, resamples=resamples)
    finally:
        written, left = session.close()
        _report(labels, written, left)


def _report(labels: pathlib.Path, written: int, left: list[str]) -> None:
    _say(f"labels: {written} responses in {labels}")
    for why in left:
        _say(f"  left out: {why}")


def _say(line: str) -> None:
    # One line whatever the terminal's width: a script reads the URL from it.
    ui.console.print(line, markup=False, highlight=False, soft_wrap=True)
