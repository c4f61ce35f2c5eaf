"""Judge panels: several judges answer the same yes/no question and a rule decides.

`panel:M1,M2,M3` names a panel wherever a stage's model is named; each member is any model a
stage accepts (a preset, a model folder, `human:PATH`), so a member's name holds no comma.
Only yes/no stages are voted on (verifiability, entailment); fact lists are not.

The vote is pure: members' answers in (True, False, or None for a member that gave no verdict:
unparsed, refused, failed), one decision out. A member without a verdict drops out of that
vote; a vote nobody takes part in decides nothing. A tie decides NO, and says so: a panel that
cannot decide must not lift a score.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..results import MetaEval
from ..stages import YES_NO, Stage

PREFIX = "panel:"
# Bumped when a rule's meaning changes: part of every panel's identity.
RULES = "panel/1"
VOTES = ("majority", "unanimous", "any", "weighted")
# The subtask (and its statistic) each voted stage's reliability is measured by in meta-eval.
SUBTASK_OF = {Stage.VERIFIABLE: "subtask1", Stage.ENTAIL: "subtask3"}


def voted_stage(stage: str) -> Stage | None:
    """The yes/no stage whose rules a stage follows (None: not a yes/no stage). An entailer
    routed by modality (e.g. `entail_visual`) still answers entailment questions."""
    if stage in YES_NO:  # a yes/no verdict: the only ones a panel may judge
        return Stage(stage)
    return Stage.ENTAIL if stage.startswith(Stage.ENTAIL) else None


def is_panel(model: str) -> bool:
    return model.startswith(PREFIX)


def members_of(model: str) -> tuple[str, ...]:
    """The members of `panel:M1,M2,...`; ValueError naming what is wrong with the spec."""
    if not is_panel(model):
        raise ValueError(f"{model!r} is not a panel (panel:M1,M2,...)")
    names = tuple(m.strip() for m in model[len(PREFIX) :].split(","))
    if any(not m for m in names):
        raise ValueError(
            f"{model!r}: an empty member name (members are separated by single commas)"
        )
    if len(names) < 2:
        raise ValueError(f"{model!r}: a panel needs at least 2 members")
    nested = [m for m in names if is_panel(m)]
    if nested:
        raise ValueError(f"{model!r}: a member cannot itself be a panel")
    twice = sorted({m for m in names if names.count(m) > 1})
    if twice:
        raise ValueError(
            f"{model!r}: {', '.join(twice)} named twice (one model answers the same "
            "question the same way; a second copy only adds a vote)"
        )
    return names


def reliability_weight(balanced_accuracy: float) -> float:
    """A member's weight from its measured balanced accuracy: the log-odds of being right,
    0 at chance or below. For independent voters these weights decide best (Nitzan & Paroush,
    1982); a linear weight would let two near-chance judges outvote a reliable one. Capped at
    0.99 so a judge that was perfect on a small sample does not become a dictator by fiat."""
    p = min(max(float(balanced_accuracy), 0.5), 0.99)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class Rule:
    """How a panel decides: `vote`, and for "weighted" each member's weight (by name)."""

    vote: str = "majority"
    weights: tuple[tuple[str, float], ...] = ()
    source: str | None = None  # where the weights came from (a meta_eval.json), for provenance

    def __post_init__(self):
        if self.vote not in VOTES:
            raise ValueError(f"vote must be one of {', '.join(VOTES)}, not {self.vote!r}")
        bad = [
            f"{m}={w!r}"
            for m, w in self.weights
            if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0)
        ]
        if bad:
            raise ValueError(f"panel weights must be finite and >= 0 ({', '.join(bad)})")

    def weight(self, member: str) -> float:
        return dict(self.weights).get(member, 1.0) if self.vote == "weighted" else 1.0

    def check(self, members: Sequence[str]) -> None:
        """ValueError when the weights do not fit these members."""
        if self.vote != "weighted":
            return
        given = dict(self.weights)
        missing = [m for m in members if m not in given]
        extra = sorted(set(given) - set(members))
        if missing:
            raise ValueError(f"weighted vote: no weight for {', '.join(missing)}")
        if extra:
            raise ValueError(
                f"weighted vote: weights for {', '.join(extra)}, which is not a member"
            )

    def as_dict(self) -> dict:
        d: dict = {"vote": self.vote}
        if self.vote == "weighted":
            d["weights"] = dict(self.weights)
            if self.source:
                d["weights_from"] = self.source
        return d


def panel_identity(rule: Rule, members: Sequence[tuple[str, str]]) -> str:
    """The panel's identity from its rule and its members' (name, identity) pairs: what its
    decision depends on. Members' order does not change a vote, so it does not change this."""
    body = {
        "vote": rule.vote,
        "members": sorted([ident, rule.weight(name)] for name, ident in members),
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    return f"{RULES}:{rule.vote}:{digest}"


@dataclass(frozen=True)
class Tally:
    """One vote's result: `yes` the decision (None: no member voted), the counts behind it."""

    yes: bool | None
    votes_yes: int
    votes_no: int
    dropped: int
    weight_yes: float = 0.0
    weight_no: float = 0.0
    tie: bool = False

    def as_dict(self) -> dict:
        d: dict = {
            "decision": None if self.yes is None else ("YES" if self.yes else "NO"),
            "yes": self.votes_yes,
            "no": self.votes_no,
            "dropped": self.dropped,
            "tie": self.tie,
        }
        if self.weight_yes or self.weight_no:
            d["weight_yes"], d["weight_no"] = self.weight_yes, self.weight_no
        return d


def vote(rule: Rule, answers: Mapping[str, bool | None]) -> Tally:
    """The panel's decision from its members' answers (member name -> True / False / None).

    majority: YES when more members say YES than NO; weighted: when the YES weight exceeds the
    NO weight; unanimous: when every voting member says YES; any: when one does. Members whose
    answer is None drop out first. A tie (majority or weighted) is NO, flagged."""
    voting = {m: a for m, a in answers.items() if a is not None}
    yes = [m for m, a in voting.items() if a]
    no = [m for m, a in voting.items() if not a]
    dropped = len(answers) - len(voting)
    wy = math.fsum(rule.weight(m) for m in yes) if rule.vote == "weighted" else 0.0
    wn = math.fsum(rule.weight(m) for m in no) if rule.vote == "weighted" else 0.0
    if not voting:
        return Tally(None, 0, 0, dropped, wy, wn)
    tie = False
    if rule.vote == "majority":
        decision, tie = len(yes) > len(no), len(yes) == len(no)
    elif rule.vote == "weighted":
        decision, tie = wy > wn, wy == wn
    elif rule.vote == "unanimous":
        decision = not no
    else:  # any
        decision = bool(yes)
    return Tally(decision, len(yes), len(no), dropped, wy, wn, tie)


def vote_share(tally: Tally) -> float | None:
    """The share of the vote that said YES: of the weight under a weighted vote, of the voting
    members otherwise; None when nobody voted."""
    if tally.weight_yes or tally.weight_no:
        return tally.weight_yes / (tally.weight_yes + tally.weight_no)
    voted = tally.votes_yes + tally.votes_no
    return tally.votes_yes / voted if voted else None


def mean_p_yes(values: Sequence[float | None]) -> float | None:
    """The members' mean `p_yes`, over the members that gave one; None when none did."""
    known = [v for v in values if v is not None]
    return math.fsum(known) / len(known) if known else None


def weights_from_meta(report: MetaEval, stage: str, members: Sequence[str]) -> dict[str, float]:
    """Each member's weight for `stage` from a `murgat meta-eval` report (its meta_eval.json):
    the balanced accuracy, on that stage's subtask, of the runs whose judge for the stage is
    the member (their mean when several are), as `reliability_weight`. ValueError naming a
    member the report does not measure."""
    voted = voted_stage(stage)
    if voted is None:
        raise ValueError(f"{stage} is not a yes/no stage: a panel does not judge it")
    subtask = SUBTASK_OF[voted]
    out: dict[str, float] = {}
    runs = (report.runs or {}).values()
    for m in members:
        blocks = [r.binary(subtask) for r in runs if r.judge_of(stage) == m]
        found = [b.balanced_accuracy for b in blocks if b and b.balanced_accuracy is not None]
        if not found:
            raise ValueError(
                f"the meta-eval report measures no run whose {stage} judge is {m!r} "
                f"(no {subtask} balanced accuracy to weigh it by)"
            )
        out[m] = reliability_weight(sum(found) / len(found))
    return out


__all__ = [
    "PREFIX",
    "RULES",
    "Rule",
    "SUBTASK_OF",
    "Tally",
    "VOTES",
    "is_panel",
    "mean_p_yes",
    "members_of",
    "panel_identity",
    "reliability_weight",
    "vote",
    "vote_share",
    "voted_stage",
    "weights_from_meta",
]
