"""One annotator's session opened from the command's inputs: the source read, the store opened,
the labels file held (unless only exporting)."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from .export import LabelsBusy
from .session import Session, SessionError
from .source import Source, SourceError, load_source
from .store import Store, StoreBusy


class CannotOpen(ValueError):
    """The source cannot be read, or the store or labels are held by another session."""


@dataclass
class Opened:
    session: Session
    source: Source
    store_path: pathlib.Path


def open_session(
    source: pathlib.Path,
    media_root: pathlib.Path,
    labels: pathlib.Path,
    annotator: str,
    *,
    store: pathlib.Path | None = None,
    responses: pathlib.Path | None = None,
    abstained: bool = False,
    show_judge: bool = False,
    overlap: int | None = None,
    hold: bool = True,
    order: str | None = None,
    order_seed: int | None = None,
) -> Opened:
    """`annotator`'s session over `source` (a `murgat score` folder or a responses file), its
    answers in `store` (default: annotate.sqlite beside `labels`); `hold`: keep `labels` for
    this session (serving), else only export; `order`, `order_seed`: the asking order
    (`Session`). CannotOpen: nothing was opened."""
    try:
        src = load_source(source, media_root, responses=responses, abstained=abstained)
    except SourceError as e:
        raise CannotOpen(str(e)) from None
    store_path = store or labels.parent / "annotate.sqlite"
    db = Store(store_path)
    try:
        session = Session(
            src,
            db,
            annotator,
            show_judge=show_judge,
            overlap=overlap,
            labels=labels,
            hold=hold,
            order=order,
            order_seed=order_seed,
        )
    except (StoreBusy, SessionError, LabelsBusy) as e:
        db.close()
        raise CannotOpen(str(e)) from None
    return Opened(session, src, store_path)
