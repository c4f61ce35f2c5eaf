"""Per-fact scores from a fact's verdicts, and the acceptance rule for decontextualized rewrites."""

from __future__ import annotations

import re

from ..grading import FactScore, score_fact_default, score_fact_reference
from .judging import Outcome
from .state import FactState, SentenceState


def _yes(out: Outcome | None) -> bool | None:
    return None if out is None or not out.ok else out.yes


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def rewrite_problem(original: str, rewrite: str) -> str | None:
    """Why a decontextualized sentence is not accepted (None when it is).

    Decontextualization only replaces references, so the rewrite must keep most of the
    original's words and stay about as long; anything else is a judge that paraphrased or
    hallucinated, and the original sentence is judged instead.
    """
    if not rewrite:
        return "empty rewrite"
    if len(rewrite) > 2 * len(original) + 60:
        return "rewrite is much longer than the sentence"
    words = {w.lower() for w in _WORD.findall(original) if len(w) > 2}
    if words:
        kept = {w.lower() for w in _WORD.findall(rewrite)}
        share = len(words & kept) / len(words)
        if share < 0.6:
            return f"rewrite keeps only {share:.0%} of the sentence's words"
    return None


def _why_missing(fact: FactState) -> str | None:
    for name, out in [
        ("joint", fact.joint),
        *[(f"citation {i + 1}", o) for i, o in fact.alone.items()],
        *[(f"without citation {i + 1}", o) for i, o in fact.without.items()],
    ]:
        if out is not None and not out.ok:
            return f"{name} verdict missing: {out.error or out.unparsed}"
    return None


def score_fact(sent: SentenceState, fact: FactState, reference: bool) -> FactScore:
    score = _score_fact(sent, fact, reference)
    if not score.scored and score.reason and "unparsed" in score.reason:
        why = _why_missing(fact)
        if why:
            return FactScore(score.precision, score.recall, score.precise, why)
    return score


def _score_fact(sent: SentenceState, fact: FactState, reference: bool) -> FactScore:
    if reference:
        return score_fact_reference(
            sent.usable,
            sent.extracted,
            {i: _yes(o) for i, o in fact.alone.items()},
            _yes(fact.joint),
        )
    return score_fact_default(
        sent.usable,
        _yes(fact.joint),
        {i: _yes(o) for i, o in fact.alone.items()},
        {i: _yes(o) for i, o in fact.without.items()},
    )
