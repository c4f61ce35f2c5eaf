"""Escalation: a cascade of yes/no judges, each trusted only above its certified threshold.

`murgat meta-eval --certify` finds, per judge and per yes/no stage, the lowest confidence
threshold at which that judge's verdicts agree with people often enough (Trust or Escalate).
`murgat score --escalate-to M` then asks the run's judge first; a verdict whose confidence (the
probability of the label it decoded: p_yes for a YES, 1 - p_yes for a NO) is under the judge's
threshold goes to the next judge, and so on. What
no judge keeps is *abstained*: it decides nothing and is never read as YES or NO.

A verdict is kept when the judge gave one (parsed, with a p_yes) and its confidence reaches
the threshold. A judge with no certified threshold for the stage keeps nothing (it escalates
everything it sees); human labels are certain (p_yes 0 or 1) and keep every verdict they give.
Pure: no engine, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

# Bumped when the keep rule changes: part of every cascade's identity. 2: the confidence is the
# decoded label's probability (a YES spelt in two tokens can decode with p_yes under 0.5).
RULES = "cascade/2"


def confidence(yes: bool | None, p_yes: float | None) -> float | None:
    """How sure a yes/no verdict is: the probability of the label it decoded, p_yes for a YES and
    1 - p_yes for a NO (what `murgat meta-eval --certify` certifies); None without either."""
    if yes is None or p_yes is None:
        return None
    return p_yes if yes else 1.0 - p_yes


@dataclass(frozen=True)
class Step:
    """One judge of a cascade: its name, its certified threshold for the stage (None: nothing
    certified), and whether its verdicts are certain by construction (human labels)."""

    judge: str
    threshold: float | None
    certain: bool = False

    def keeps(self, yes: bool | None, p_yes: float | None) -> bool:
        """Whether this judge's verdict (`yes`: None when it gave none) stands."""
        if yes is None:
            return False
        if self.certain:
            return True
        c = confidence(yes, p_yes)
        return self.threshold is not None and c is not None and c >= self.threshold

    def as_dict(self) -> dict:
        d: dict = {"judge": self.judge, "threshold": self.threshold}
        if self.certain:
            d["certain"] = True
        return d


def decide(
    steps: Sequence[Step], answers: Sequence[tuple[bool | None, float | None]]
) -> int | None:
    """The index of the judge whose verdict decides, given the answers (yes, p_yes) of the
    judges asked so far, in order; None when none of them keeps its verdict."""
    for i, (step, (yes, p)) in enumerate(zip(steps, answers)):
        if step.keeps(yes, p):
            return i
    return None


def cascade_identity(steps: Sequence[Step], identities: Sequence[str]) -> str:
    """What a cascade's decisions depend on: each judge's identity and threshold, in order."""
    body = [[ident, s.threshold, s.certain] for s, ident in zip(steps, identities, strict=True)]
    digest = hashlib.sha256(json.dumps([RULES, body]).encode()).hexdigest()[:16]
    return f"{RULES}:{digest}"


__all__ = ["RULES", "Step", "cascade_identity", "confidence", "decide"]
