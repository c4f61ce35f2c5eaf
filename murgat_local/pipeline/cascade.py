"""An escalation cascade as a stage judge: member judges asked in turn, `judges.cascade` decides.

Each member is an ordinary stage judge (a StageJudge, or a panel) on its own engine, so its
verdicts are cached under its own identity exactly as when it judges alone; a member is asked
only the calls every judge before it escalated. The decision is never cached: it is recomputed
from the members' verdicts and thresholds (it costs nothing), so changing a threshold re-judges
nothing.

A decided outcome is the deciding member's own (its verdict and p_yes), with `cascade` saying
who decided and what each judge asked said. An abstained one carries no verdict: its `error`
says so, so the protocol leaves the sentence (verifiable) or the fact (entail) unscored with that
reason, counted, as for any verdict that is missing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence

from ..judges.calls import Call, Outcome
from ..judges.cascade import Step, cascade_identity, decide
from ..judges.verdicts import ReasonedYesNo, YesNo
from .composite import HolderGroup, SummedCounters
from .judging import Judge

ABSTAINED = "abstained: no judge of the cascade kept its verdict (under each one's threshold)"


class CascadeEngine(HolderGroup):
    """The cascade as an engine holder (identity, detail) for provenance; the members' own
    holders do the work. A member that answers per item (human labels) need not hold every
    response (one it lacks has its escalated verdicts abstained), but one it holds must be about
    the response's sentences as split here (`check_response`)."""

    kind = "cascade"

    def __init__(self, steps: Sequence[Step], holders: Sequence):
        super().__init__(holders)
        self._named = list(zip((s.judge for s in steps), holders))
        self.name = " -> ".join(s.judge for s in steps)
        self.identity = cascade_identity(steps, [h.identity for h in holders])
        self.identity_detail = {
            "kind": "cascade",
            "judges": [
                {
                    **s.as_dict(),
                    "engine": h.kind,
                    "identity": h.identity,
                    "detail": h.identity_detail,
                }
                for s, h in zip(steps, holders)
            ],
        }

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        """Labels (full or answers to abstained verdicts) about other sentences than this
        response's would decide the wrong verdicts: the response's error, before any call."""
        for name, h in self._named:
            why = h.check_response(item_id, sentences, member=True)
            if why:
                return f"cascade judge {name}: {why}"
        return None


class CascadeCounters(SummedCounters):
    """The members' counters added up, and the cascade's decisions over unique calls. A certain
    member's (human labels') refusals are abstentions, not failed calls."""

    def __init__(self, steps: Sequence[Step], members: Sequence):
        super().__init__(members)
        self._named = list(zip(steps, members))
        self.decided: dict[str, int] = {s.judge: 0 for s in steps}
        self.abstained = 0
        self.wall_s = 0.0

    def __getattr__(self, name: str):
        if name == "failed":
            named = self.__dict__["_named"]
            return sum(m.counters.failed for s, m in named if not s.certain)
        return super().__getattr__(name)

    def as_dict(self) -> dict:
        return {
            **self.totals(),
            "failed": self.failed,
            "wall_s": self.wall_s,
            "decided": dict(self.decided),
            "abstained": self.abstained,
            "members": {s.judge: m.counters.as_dict() for s, m in self._named},
        }


class CascadeJudge:
    """A stage judge made of member judges asked in turn; `run` returns one outcome per call."""

    def __init__(
        self,
        stage: str,
        members: Sequence[tuple[Step, Judge]],
        on_progress: Callable[[int, float], None] | None = None,
    ):
        self.stage = stage
        self.steps = [s for s, _ in members]
        self.names = tuple(s.judge for s in self.steps)
        self.members = [j for _, j in members]
        self.engine = CascadeEngine(self.steps, [j.engine for j in self.members])
        self.cache = self.members[0].cache
        self.batch_size = self.members[0].batch_size
        self.counters = CascadeCounters(self.steps, self.members)
        self.on_progress = on_progress

    @property
    def on_progress(self):
        return self._progress

    @on_progress.setter
    def on_progress(self, fn: Callable[[int, float], None] | None) -> None:
        self._progress = fn
        self.members[0].on_progress = fn  # the first judge sees every call

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        t0 = time.perf_counter()
        asked: list[list[tuple[Step, Outcome]]] = [[] for _ in calls]
        todo = list(range(len(calls)))
        for step, member in zip(self.steps, self.members):
            if not todo:
                break
            outs = member.run([calls[i] for i in todo])
            left = []
            for i, out in zip(todo, outs):
                asked[i].append((step, out))
                if not step.keeps(_yes(out), out.p_yes):
                    left.append(i)
            todo = left
        outcomes = [self._decide(a) for a in asked]
        seen: dict[str, Outcome] = {}
        for o in outcomes:
            seen.setdefault(o.key, o)
        for o in seen.values():
            decided = o.cascade
            assert decided is not None, "a cascade's every outcome says how it was decided"
            who = decided["decided_by"]
            if who is None:
                self.counters.abstained += 1
            else:
                self.counters.decided[who] += 1
        self.counters.wall_s += time.perf_counter() - t0
        return outcomes

    def _decide(self, asked: list[tuple[Step, Outcome]]) -> Outcome:
        i = decide([s for s, _ in asked], [(_yes(o), o.p_yes) for _, o in asked])
        key = hashlib.sha256(
            "|".join([self.engine.identity, *(o.key for _, o in asked)]).encode()
        ).hexdigest()
        info = {
            "decided_by": asked[i][0].judge if i is not None else None,
            "asked": tuple(asked),
        }
        if i is None:
            return Outcome(error=ABSTAINED, key=key, cascade=info)
        return dataclasses.replace(asked[i][1], key=key, cascade=info)


def _yes(out: Outcome) -> bool | None:
    """A judge's answer: YES / NO, or None when it gave no verdict."""
    if not out.ok or out.verdict is None:
        return None
    v = out.verdict
    return v.yes if isinstance(v, YesNo | ReasonedYesNo) else None


__all__ = ["ABSTAINED", "CascadeCounters", "CascadeEngine", "CascadeJudge"]
