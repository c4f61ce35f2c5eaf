"""A judge panel as a stage judge: member StageJudges answer, `judges.panel.vote` decides.

Each member is an ordinary StageJudge on its own engine, so its verdicts are cached under its
own identity, exactly as when it judges alone: a panel that gains a member runs only that
member, and a judge that ran alone before lends the panel its verdicts. The decision itself is
never cached; it is recomputed from the members' verdicts (a vote costs nothing).

Members run their batches concurrently (one thread each), so members on separate engines, on
separate GPUs, decode at the same time and a panel costs about its slowest member. Engines are
started one after another first: vLLM's start-up is not made to run twice at once in one process.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import pathlib
import threading
import time
from collections.abc import Callable, Sequence

from ..judges.calls import Call, Outcome
from ..judges.panel import (
    PREFIX,
    RULES,
    Rule,
    mean_p_yes,
    panel_identity,
    vote,
    vote_share,
)
from ..judges.verdicts import ReasonedYesNo, YesNo
from .composite import HolderGroup, SummedCounters
from .judging import StageJudge


class PanelEngine(HolderGroup):
    """The panel as an engine holder (identity, detail, started, get, close) for provenance and
    the protocol's per-item checks; the members' own holders do the work."""

    kind = "panel"

    def __init__(self, names: Sequence[str], holders: Sequence, rule: Rule):
        super().__init__(holders)
        self.name = PREFIX + ",".join(names)
        self.holders = dict(zip(names, holders))
        self.rule = rule
        self.identity = panel_identity(rule, [(n, h.identity) for n, h in self.holders.items()])
        detail: dict = {
            "kind": "panel",
            "rules": RULES,
            **rule.as_dict(),
            "members": [
                {
                    "model": n,
                    "engine": h.kind,
                    "identity": h.identity,
                    "detail": h.identity_detail,
                    "neutralization": h.neutralization,
                }
                for n, h in self.holders.items()
            ],
        }
        if rule.source:
            path = pathlib.Path(rule.source)
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
            detail["weights_from"] = {"path": str(path.resolve()), "sha256": digest}
        self.identity_detail = detail

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        """A member that answers per item (human labels) must hold the response as split here,
        as when it judges alone: labels made for other sentences would vote on the wrong ones."""
        for name, h in self.holders.items():
            why = h.check_response(item_id, sentences)
            if why:
                return f"panel member {name}: {why}"
        return None


class PanelCounters(SummedCounters):
    """The members' counters added up (a panel's calls are its members' calls), and its votes."""

    def __init__(self, names: Sequence[str], members: Sequence[StageJudge]):
        super().__init__(members)
        self._named = list(zip(names, members))
        self.votes = 0  # unique decisions
        self.ties = 0  # of which ties (decided NO)
        self.undecided = 0  # of which no member gave a verdict
        self.wall_s = 0.0

    def as_dict(self) -> dict:
        return {
            **self.totals(),
            "wall_s": self.wall_s,
            "votes": self.votes,
            "ties": self.ties,
            "undecided": self.undecided,
            "members": {n: m.counters.as_dict() for n, m in self._named},
        }


class PanelJudge:
    """A stage judge made of member judges; `run` returns the panel's outcome per call, each
    carrying the members' outcomes and the vote."""

    def __init__(
        self,
        stage: str,
        members: Sequence[tuple[str, StageJudge]],
        rule: Rule,
        on_progress: Callable[[int, float], None] | None = None,
    ):
        rule.check([n for n, _ in members])
        self.stage = stage
        self.names = tuple(n for n, _ in members)
        self.members = [j for _, j in members]
        self.rule = rule
        self.engine = PanelEngine(self.names, [j.engine for j in self.members], rule)
        self.cache = self.members[0].cache
        self.batch_size = self.members[0].batch_size
        self.counters = PanelCounters(self.names, self.members)
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        self.on_progress = on_progress

    @property
    def on_progress(self):
        return self._progress

    @on_progress.setter
    def on_progress(self, fn: Callable[[int, float], None] | None) -> None:
        self._progress = fn
        if fn is None:
            for m in self.members:
                m.on_progress = None
            return
        progress = fn

        def report(n: int, _busy: float) -> None:
            with self._lock:  # members report from their own threads
                progress(n, self.counters.wall_s + time.perf_counter() - self._t0)

        for m in self.members:
            m.on_progress = report

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        self._t0 = t0 = time.perf_counter()
        self._start_engines(calls)
        with cf.ThreadPoolExecutor(
            max_workers=len(self.members), thread_name_prefix="panel"
        ) as pool:
            futures = [pool.submit(m.run, calls) for m in self.members]
            results = [f.result() for f in futures]
        outcomes = [
            self._decide(call, tuple(zip(self.names, (r[i] for r in results))))
            for i, call in enumerate(calls)
        ]
        seen: dict[str, Outcome] = {}
        for o in outcomes:
            seen.setdefault(o.key, o)
        self.counters.votes += len(seen)
        self.counters.ties += sum(1 for o in seen.values() if o.panel and o.panel.get("tie"))
        self.counters.undecided += sum(1 for o in seen.values() if not o.ok)
        self.counters.wall_s += time.perf_counter() - t0
        return outcomes

    def _start_engines(self, calls: Sequence[Call]) -> None:
        for m in self.members:
            if not m.engine.started:
                unique, cached = m.pending(calls)
                if unique > cached:
                    m.engine.get()

    def _decide(self, call: Call, members: tuple[tuple[str, Outcome], ...]) -> Outcome:
        answers = {n: _yes(o) for n, o in members}
        tally = vote(self.rule, answers)
        # Its confidence: the share of the vote for YES, and the members' mean p_yes (over the
        # members that voted), which is the panel's own p_yes.
        voters = [o for n, o in members if answers[n] is not None]
        mean = mean_p_yes([o.p_yes for o in voters])
        panel = {
            "vote": self.rule.vote,
            **tally.as_dict(),
            "vote_share": vote_share(tally),
            "p_yes_mean": mean,
        }
        confidence: dict = {
            "p_yes": mean,
            "p_yes_unknown": None if mean is not None else "no voting member gave a p_yes",
        }
        key = hashlib.sha256(
            "|".join([self.engine.identity, *(o.key for _, o in members)]).encode()
        ).hexdigest()
        if tally.yes is None:
            why = "; ".join(f"{n}: {o.error or o.unparsed or 'no verdict'}" for n, o in members)
            return Outcome(
                error=f"no panel member gave a verdict ({why})",
                key=key,
                members=members,
                panel=panel,
            )
        label = "YES" if tally.yes else "NO"
        kind = call.template.verdict
        if kind is None:
            raise TypeError(
                f"a panel decides yes/no verdicts, not the free text of {call.template.name}"
            )
        fields = {"label": label}
        counts = f"{tally.votes_yes} YES, {tally.votes_no} NO" + (
            f", {tally.dropped} without a verdict" if tally.dropped else ""
        )
        if "reason" in kind.model_fields:
            fields["reason"] = f"panel ({self.rule.vote}): {counts}"
        note = f"tie ({counts}): decided NO" if tally.tie else None
        return Outcome(
            kind.model_validate(fields),
            f"panel ({self.rule.vote}): {counts} -> {label}",
            cached=all(o.cached for _, o in members),
            key=key,
            note=note,
            members=members,
            panel=panel,
            **confidence,
        )


def _yes(out: Outcome) -> bool | None:
    """A member's answer: YES / NO, or None when it gave no verdict (it drops out of the vote)."""
    if not out.ok or out.verdict is None:
        return None
    v = out.verdict
    return v.yes if isinstance(v, YesNo | ReasonedYesNo) else None


__all__ = ["PanelCounters", "PanelEngine", "PanelJudge"]
