"""Answering judge calls from partial labels (`text/partial_labels.py`): people's answers to
the verdicts a run abstained on, read by `human:PATH` in a re-run's cascade.

Only what people answered is answered; every other call is refused with the reason (in a
cascade: the verdict stays abstained). A call is matched by what it is about, never by indices:

  verifiable   the answered sentence whose claim is the prompt's SENTENCE
  entail       the answered fact whose text is the prompt's CLAIM, and the call's citations (its
               `Evidence:` line) found among that sentence's citations, in order

An entail call over citations S is answered by the rule full labels follow (`judges/human.py`):
NO when the fact is not entailed; else, with P the needed citations, YES iff S holds all of P
(when P is empty: iff S holds 2 or more). People answered necessity for some citations only, so
the answer is given only when every completion of the unanswered ones agrees (a citation people
say is not needed alone never supports it; the others without a needed one never do); otherwise
it is refused as unsettled. A necessity answer is read as about a supported fact (the scorer
reads necessity only where the citations together support it), so a call over some of the
citations needs no `entailed` answer; a call over all of them does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from ..text.partial_labels import PartialFact, PartialResponse, PartialSentence
from .evidence import describe_evidence

_TAIL = " (attached, in this order)"
# Necessity unanswered for more citations than this is not enumerated: refused as unsettled.
MAX_UNKNOWN = 12


def _norm(text: str) -> str:
    return " ".join(text.split())


def _describe(s: PartialSentence) -> list[str | None]:
    out: list[str | None] = []
    for c in s.citations:
        try:
            out.append(describe_evidence([c]).removesuffix(_TAIL))
        except Exception:  # a citation without a time is never attached
            out.append(None)
    return out


def positions(described: Sequence[str | None], attached: list[str]) -> list[int] | None:
    """Where the evidence a call attaches lies among a sentence's described citations: the
    first match of each in order (the protocol keeps their order), or None when they are not a
    subsequence of them."""
    chosen: list[int] = []
    i = 0
    for part in attached:
        while i < len(described) and described[i] != part:
            i += 1
        if i == len(described):
            return None
        chosen.append(i)
        i += 1
    return chosen


def subset(s: PartialSentence, attached: list[str]) -> frozenset[int] | str | None:
    """The citations of `s` a call attaches (a subsequence, in order); None when they are not
    among its citations; a reason when citations that read the same make it ambiguous."""
    described = _describe(s)
    chosen = positions(described, attached)
    if chosen is None:
        return None
    for part in set(attached):
        if attached.count(part) < described.count(part):
            return f"citations of the sentence that both cite {part!r} cannot be told apart"
    return frozenset(chosen)


def settle(fact: PartialFact, n: int, cited: frozenset[int]) -> bool | str:
    """Whether citations `cited` (of a sentence with `n`) support `fact`, from people's answers;
    a reason when the answers do not settle it."""
    precise = dict(fact.precise)
    whole = cited == frozenset(range(n))
    if fact.entailed is False:
        return False
    if fact.entailed is None and (whole or not precise):
        return "people were not asked (or were unsure) whether the citations support the fact"
    unknown = [k for k in range(n) if k not in precise]
    if len(unknown) > MAX_UNKNOWN:
        return f"necessity is unanswered for {len(unknown)} citations: too many to settle"
    answers: set[bool] = set()
    for bits in itertools.product((False, True), repeat=len(unknown)):
        needed = {k for k, v in {**precise, **dict(zip(unknown, bits))}.items() if v}
        if not needed and n < 3:
            continue  # with 1 or 2 citations a supported fact needs one (annotate asks so)
        answers.add(needed <= cited if needed else len(cited) >= 2)
    if not answers:
        return f"no citation of {n} is needed: with fewer than 3 one must be"
    if len(answers) > 1:
        asked = ", ".join(f"c{k + 1}" for k in sorted(precise)) or "none"
        return (
            f"the answers (necessity of {asked}) do not settle whether citation(s) "
            f"{', '.join(f'c{k + 1}' for k in sorted(cited))} support the fact"
        )
    return answers.pop()


def verifiable(labels: PartialResponse, fenced: str, key: Callable[[str], str]) -> bool | str:
    """The answer for the sentence the prompt fences, or why there is none."""
    found = [s for s in labels.sentences if key(s.claim) == _norm(fenced)]
    answers = {s.verifiable for s in found if s.verifiable is not None}
    if not answers:
        return (
            f"people gave no verifiability answer for {_norm(fenced)!r} in response {labels.id!r}"
        )
    if len(answers) > 1:
        return (
            f"sentences of response {labels.id!r} reading {_norm(fenced)!r} were answered both ways"
        )
    return answers.pop()


def entailed(
    labels: PartialResponse, claim: str, attached: list[str], key: Callable[[str], str]
) -> bool | str:
    """The answer for an entail call (`claim` over the `attached` evidence), or why none."""
    answers: set[bool] = set()
    reasons: list[str] = []
    facts = 0
    for s in labels.sentences:
        for f in s.facts:
            if key(f.text) != _norm(claim):
                continue
            facts += 1
            cited = subset(s, attached)
            if cited is None:
                continue
            out = cited if isinstance(cited, str) else settle(f, len(s.citations), cited)
            if isinstance(out, str):
                reasons.append(out)
            else:
                answers.add(out)
    if not facts:
        return f"people gave no answer about the fact {_norm(claim)!r} in response {labels.id!r}"
    if reasons:
        return reasons[0]
    if not answers:
        return (
            f"the attached evidence ({'; '.join(attached)}) is not among the citations of the "
            f"sentence people answered about the fact {_norm(claim)!r}"
        )
    if len(answers) > 1:
        return f"answers about the fact {_norm(claim)!r} in response {labels.id!r} disagree"
    return answers.pop()


__all__ = ["MAX_UNKNOWN", "entailed", "settle", "subset", "verifiable"]
