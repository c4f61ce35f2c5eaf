"""One shape for an annotation of a response, whoever made it: a judge run's record or a
person's labels. Meta-evaluation compares two of these, response by response.

Sentences are the default-mode sentences; texts are compared after whitespace normalization.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..grading import FactScore, SentenceScore, score_response
from ..text.labels import LabelledResponse, read_labels

_SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    return _SPACE.sub(" ", text or "").strip()


@dataclass(frozen=True)
class FactView:
    text: str
    entailed: bool | None  # the joint verdict (None: unknown)
    precise: tuple[bool | None, ...] = ()


@dataclass(frozen=True)
class SentenceView:
    text: str
    verifiable: bool | None
    citations: int
    facts: tuple[FactView, ...] | None = None  # None: not decomposed


@dataclass(frozen=True)
class ResponseView:
    id: str
    sentences: tuple[SentenceView, ...]
    scores: Mapping[str, float | None] = field(default_factory=dict)  # coverage, f1, murgat_s, ...


def from_record(record: Mapping) -> ResponseView | None:
    """A `murgat score` record (default mode, status ok) as a view; None otherwise."""
    if record.get("status") != "ok" or record.get("mode", "default") != "default":
        return None
    sentences = []
    for s in (record.get("trace") or {}).get("sentences", []):
        verdict = (s.get("verifiable") or {}).get("value")
        facts = None
        if "facts" in s:
            facts = tuple(
                FactView(
                    f.get("text", ""),
                    (f.get("joint") or {}).get("value"),
                    tuple(f.get("precise") or ()),
                )
                for f in s["facts"]
            )
        sentences.append(
            SentenceView(s.get("text", ""), verdict, len(s.get("citations") or []), facts)
        )
    scores = {k: record.get(k) for k in ("coverage", "precision", "recall", "f1", "murgat_s")}
    return ResponseView(str(record.get("id")), tuple(sentences), scores)


def from_labels(labels: LabelledResponse) -> ResponseView:
    """A person's labels as a view, with the scores the metric gives them: a fact is entailed or
    not as labelled, and its precision is the share of `precise` citations when entailed, 0
    otherwise (what the scorer's strict-necessity rule gives such labels; see judges.human)."""
    views, scored = [], []
    for s in labels.sentences:
        n = len(s.citations)
        facts = None
        if s.facts is not None:
            facts = tuple(FactView(f.text, f.entailed, tuple(f.precise or ())) for f in s.facts)
        views.append(SentenceView(s.text, s.verifiable, n, facts))
        fact_scores = []
        for f in facts or ():
            if not f.entailed:
                fact_scores.append(FactScore(0.0, 0.0, tuple(False for _ in range(n))))
            else:
                share = sum(1 for p in f.precise if p) / len(f.precise) if f.precise else 1.0
                fact_scores.append(FactScore(share, 1.0, f.precise))
        scored.append(SentenceScore(s.verifiable, n > 0, tuple(fact_scores)))
    result = score_response(scored)
    return ResponseView(
        labels.id,
        tuple(views),
        {k: getattr(result, k) for k in ("coverage", "precision", "recall", "f1", "murgat_s")},
    )


def label_views(path) -> tuple[dict[str, ResponseView], list[str]]:
    """Every labelled response of a label file as a view, and the reasons of its bad lines."""
    labels, errors = read_labels(path)
    return (
        {rid: from_labels(r) for rid, r in labels.items()},
        [f"{e.source}: {e.reason}" for e in errors],
    )
