"""Everyone's answers in a store, read together: per annotator, their views and agreement.

A `Session` is one annotator's; these read every annotator's live answers on the current split
of each response, make each one's finished responses into the views `murgat meta-eval` reads,
and compare annotators with each other and with the run's judges. Apart from `session.py`
because they serve the agreement report, not the asking and answering of one annotator.
"""

from __future__ import annotations

from .export import label_record
from .source import Source
from .store import Store


def answers_of(store: Store, source: Source) -> dict[str, dict[str, dict]]:
    """Everyone's live answers on the current split of each response: annotator -> id -> answers."""
    out: dict[str, dict[str, dict]] = {}
    by_id = {it.id: it for it in source.items}
    for a in store.answers():
        item = by_id.get(a.response)
        if item is not None and a.digest == item.digest:
            out.setdefault(a.annotator, {}).setdefault(a.response, {})[a.question] = a.value
    return out


def human_views(store: Store, source: Source) -> dict[str, dict]:
    """Per annotator, their finished responses as `murgat meta-eval` reads labels (views)."""
    from ..meta.views import from_labels
    from .export import to_labelled

    out: dict[str, dict] = {}
    by_id = {it.id: it for it in source.items}
    for annotator, responses in answers_of(store, source).items():
        views = {}
        for rid, answers in responses.items():
            record, _ = label_record(by_id[rid], answers, annotator)
            if record is not None and "abstained" not in record:  # --abstained: no views
                views[rid] = from_labels(to_labelled(record))
        out[annotator] = views
    return out


def agreement_report(
    store: Store, source: Source, *, resamples: int = 10_000, seed: int = 0
) -> dict:
    """Annotators against each other, and the run's judges against each (see `agreement`)."""
    from .agreement import agreement

    return agreement(
        human_views(store, source), source.judge or None, resamples=resamples, seed=seed
    )
