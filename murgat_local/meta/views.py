"""One shape for an annotation of a response, whoever made it: a judge run's record or a
person's labels. Meta-evaluation compares two of these, response by response.

Sentences are the default-mode sentences; texts are compared after whitespace normalization.
A judge's view also carries each yes/no judgement's `p_yes` (the judge's probability of YES, read
through `p_yes`), for calibration; a person's view has none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..grading import FactScore, SentenceScore, score_response
from ..results.records import FactRecord, ScoreRecord, SentenceRecord, Verdict
from ..text.labels import LabelledResponse, read_labels

_SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    return _SPACE.sub(" ", text or "").strip()


def p_yes(judgement: Verdict | None) -> float | None:
    """A recorded yes/no judgement's `p_yes` in [0, 1], or None where the record has none (a run
    scored before p_yes was recorded, an engine that could not give it, a panel's vote). The
    record's reader refuses a p_yes that is no probability."""
    if judgement is None or judgement.p_yes is None:
        return None
    return float(judgement.p_yes)


def _yes(judgement: Verdict | None) -> bool | None:
    return None if judgement is None else judgement.yes


def _at(verdicts: Mapping[str, Verdict | None], key: str) -> Verdict | None:
    return verdicts[key] if key in verdicts else None


def precise_p_yes(
    fact: FactRecord, usable: list[bool]
) -> tuple[tuple[float | None, ...], tuple[bool, ...]]:
    """Per citation, the judge's probability that it is precise given that the fact is entailed,
    and whether a judgement decided it at all. By the scoring rule (`metrics.scores`), an unusable
    citation, and the only usable one, are decided without a judgement of their own; with two or
    more usable, citation i is precise when it entails alone, or else the others without it do
    not: p = p_alone + (1 - p_alone) (1 - p_without), the judgements taken as independent, and
    p = p_alone where `without` was not asked (the alone verdict was YES). None: a judgement it
    needs carries no p_yes."""
    ok = [i for i, u in enumerate(usable) if u]
    probs: list[float | None] = []
    judged: list[bool] = []
    for i, u in enumerate(usable):
        if not u or len(ok) < 2:
            probs.append(None)
            judged.append(False)
            continue
        judged.append(True)
        key = str(i)
        pa = p_yes(_at(fact.alone, key))
        if pa is None:
            probs.append(None)
        elif key not in fact.without:
            probs.append(pa)
        else:
            pw = p_yes(fact.without[key])
            probs.append(None if pw is None else pa + (1 - pa) * (1 - pw))
    return tuple(probs), tuple(judged)


def decomposed(sentence: SentenceRecord) -> bool:
    """Whether the record holds the sentence's facts (none found is an empty list): a writer
    leaves `facts` out of a sentence it never decomposed."""
    return "facts" in sentence.model_fields_set


def sentences(record: ScoreRecord) -> list[SentenceRecord]:
    return record.trace.sentences if record.trace is not None else []


@dataclass(frozen=True)
class FactView:
    text: str
    entailed: bool | None  # the joint verdict (None: unknown)
    precise: tuple[bool | None, ...] = ()
    entailed_p: float | None = None  # the joint verdict's p_yes
    precise_p: tuple[float | None, ...] = ()  # see `precise_p_yes`
    precise_judged: tuple[bool, ...] = ()


@dataclass(frozen=True)
class SentenceView:
    text: str
    verifiable: bool | None
    citations: int
    facts: tuple[FactView, ...] | None = None  # None: not decomposed
    verifiable_p: float | None = None


@dataclass(frozen=True)
class ResponseView:
    id: str
    sentences: tuple[SentenceView, ...]
    scores: Mapping[str, float | None] = field(default_factory=dict)  # coverage, f1, murgat_s, ...


def from_record(record: ScoreRecord) -> ResponseView | None:
    """A `murgat score` record (default mode, status ok) as a view; None otherwise."""
    if record.status != "ok" or record.mode not in (None, "default"):
        return None
    views = []
    for s in sentences(record):
        usable = [bool(c.usable) for c in s.citations]
        facts = None
        if decomposed(s):
            facts = tuple(
                FactView(
                    f.text,
                    _yes(f.joint),
                    tuple(f.precise),
                    p_yes(f.joint),
                    *precise_p_yes(f, usable),
                )
                for f in s.facts
            )
        views.append(
            SentenceView(s.text, _yes(s.verifiable), len(usable), facts, p_yes(s.verifiable))
        )
    scores = {k: getattr(record, k) for k in ("coverage", "precision", "recall", "f1", "murgat_s")}
    return ResponseView(str(record.id), tuple(views), scores)


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
    reasons = [f"{e.source}: {e.reason}" for e in errors]
    # Answers to a run's abstained verdicts label no whole response: nothing to compare with.
    reasons += [
        f"{r.source}: response {rid!r} holds answers to abstained verdicts only (--abstained)"
        for rid, r in labels.items()
        if not isinstance(r, LabelledResponse)
    ]
    return (
        {rid: from_labels(r) for rid, r in labels.items() if isinstance(r, LabelledResponse)},
        reasons,
    )


def label_sampling(path) -> dict:
    """Whether a label file's responses were drawn at random: {"random", "seed" (the order's,
    when random), "labelled", "note" (why not, when not)}. Random when every labelled response
    records the same random asking order (`order: {"seed": S}`, as `murgat annotate` writes
    it); labels asked in file order, or written otherwise, carry no such order."""
    labels, _ = read_labels(path)
    full = [r for r in labels.values() if isinstance(r, LabelledResponse)]
    seeds = {r.order_seed for r in full}
    out: dict = {"random": False, "seed": None, "labelled": len(full), "note": None}
    if not full:
        out["note"] = "no labelled responses"
    elif None in seeds:
        missing = sum(1 for r in full if r.order_seed is None)
        out["note"] = (
            f"{missing} of {len(full)} labelled responses record no random asking order "
            "(asked in file order, `murgat annotate --order file`, or written by other means)"
        )
    elif len(seeds) > 1:
        out["note"] = (
            f"the labelled responses were asked in {len(seeds)} random orders (seeds "
            f"{', '.join(map(str, sorted(s for s in seeds if s is not None)))}), not one"
        )
    else:
        out.update(random=True, seed=seeds.pop())
    return out
