"""A judge combination scored from verdicts already recorded: no model call.

A combination takes each stage's verdicts from the runs that judged it: the verifier's (or a
panel of verifiers') verifiability verdicts, the decomposer's facts, the entailer's (or a
panel's) entailment verdicts on those facts. Runs are `murgat score` records (default mode) of
the same responses; a response's sentences must read the same in every run involved.

What a run did not judge stays unknown, never guessed: a sentence a verifier finds verifiable
that the decomposer's run never decomposed (its own verifier said no) is unscored; a fact the
entailer's run does not hold (another decomposer worded it otherwise) has no verdict; a panel
decides a fact only when every member's run holds it. A leave-one-out verdict a member did not
give in its own run (its own joint and alone verdicts did not call for it) drops that member
from that vote, as an unparsed verdict would.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..judges.panel import Rule, vote
from ..pipeline.records import rescore_record
from .views import norm


@dataclass(frozen=True)
class Judge:
    """One stage's judge in a combination: a run's judge, or a panel of runs' judges.
    `sources` names, per member, the run whose records hold its verdicts."""

    model: str  # as `murgat score` takes it: a model, or panel:M1,M2,...
    members: tuple[str, ...]
    sources: tuple[str, ...]
    rule: Rule | None = None  # None: a single judge

    @property
    def home(self) -> str:
        return self.sources[0]


def single(model: str, run: str) -> Judge:
    return Judge(model, (model,), (run,))


def panel(members: Sequence[tuple[str, str]], rule: Rule) -> Judge:
    """A panel of (model, run) members."""
    return Judge(
        "panel:" + ",".join(m for m, _ in members),
        tuple(m for m, _ in members),
        tuple(r for _, r in members),
        rule,
    )


def _aligned(records: Sequence[Mapping]) -> str | None:
    """Why these records of one response cannot be combined (None when they can)."""
    for rec in records:
        if rec.get("status") != "ok" or rec.get("mode", "default") != "default":
            return (
                f"not scored in default mode in every run ({rec.get('status')}, {rec.get('mode')})"
            )
    texts = [[norm(s.get("text", "")) for s in rec["trace"]["sentences"]] for rec in records]
    if any(t != texts[0] for t in texts[1:]):
        return "the runs split the response into different sentences"
    return None


NOT_JUDGED = {"value": None, "error": "not judged in this member's run"}


def _voted(rule: Rule, members: Sequence[tuple[str, Mapping | None]]) -> dict:
    """A panel's verdict dict, as a panel run records it, from its members' recorded verdicts."""
    dicts = {name: dict(v) if v is not None else dict(NOT_JUDGED) for name, v in members}
    answers: dict[str, bool | None] = {}
    for n, d in dicts.items():
        value = d.get("value")
        answers[n] = value if isinstance(value, bool) else None
    tally = vote(rule, answers)
    out: dict = {
        "value": tally.yes,
        "raw": "",
        "panel": {"vote": rule.vote, **tally.as_dict(), "members": dicts},
    }
    if tally.yes is None:
        out["error"] = "no panel member gave a verdict"
    return out


def _verdict(judge: Judge, slot: Sequence[Mapping | None]) -> Mapping | None:
    if judge.rule is None:
        return copy.deepcopy(slot[0]) if slot[0] is not None else None
    return _voted(judge.rule, list(zip(judge.members, slot)))


def _fact_in(sentence: Mapping, text: str, usable: list[bool]) -> Mapping | None:
    """The fact of a sentence (as another run recorded it) that reads `text`, when that run
    could use the same citations (otherwise its verdicts answer other questions)."""
    if [bool(c.get("usable")) for c in sentence.get("citations") or []] != usable:
        return None
    for f in sentence.get("facts") or []:
        if norm(f.get("text", "")) == text:
            return f
    return None


def _entail(fact: dict, usable: list[bool], entailer: Judge, sentences: Sequence[Mapping]) -> None:
    """Replace a fact's entailment verdicts with the entailer's (the members' sentences given)."""
    text = norm(fact.get("text", ""))
    found = [_fact_in(s, text, usable) for s in sentences]
    known = [f for f in found if f is not None]
    fact["alone"], fact["without"] = {}, {}
    if len(known) < len(found):  # some member never judged this fact: the panel did not either
        missing = [m for m, f in zip(entailer.members, found) if f is None]
        fact["joint"] = {
            "value": None,
            "error": f"not judged by {', '.join(missing)} (its run has no such fact)",
        }
        return
    fact["joint"] = _verdict(entailer, [f.get("joint") for f in known])
    for slot in ("alone", "without"):
        keys = sorted({k for f in known for k in (f.get(slot) or {})}, key=int)
        fact[slot] = {
            k: _verdict(entailer, [(f.get(slot) or {}).get(k) for f in known]) for k in keys
        }


def combine(
    records: Mapping[str, Mapping], verifier: Judge, decomposer: str, entailer: Judge
) -> dict | str:
    """One response's record under this combination (rescored), or why it cannot be had.

    `records`: the response's record per run name; `decomposer`: the run whose facts are used
    (and whose decontextualization, when it had one)."""
    runs = {decomposer, *verifier.sources, *entailer.sources}
    missing = sorted(r for r in runs if r not in records)
    if missing:
        return f"not in run(s) {', '.join(missing)}"
    why = _aligned([records[r] for r in sorted(runs)])
    if why:
        return why
    out = copy.deepcopy(dict(records[decomposer]))
    per_run = {r: records[r]["trace"]["sentences"] for r in runs}
    for i, sent in enumerate(out["trace"]["sentences"]):
        usable = [bool(c.get("usable")) for c in sent.get("citations") or []]
        if verifier.sources != (decomposer,) or verifier.rule is not None:
            sent["verifiable"] = _verdict(
                verifier, [per_run[r][i].get("verifiable") for r in verifier.sources]
            )
        yes = (sent.get("verifiable") or {}).get("value") is True
        if not (yes and usable):
            sent.pop("decomposition", None)
            sent.pop("facts", None)
            continue
        if "decomposition" not in sent:
            sent["decomposition"] = {
                "value": None,
                "error": f"not decomposed in run {decomposer} (its verifier "
                "did not find the sentence verifiable)",
            }
            sent["facts"] = []
            continue
        if entailer.sources == (decomposer,) and entailer.rule is None:
            continue
        for fact in sent.get("facts") or []:
            _entail(fact, usable, entailer, [per_run[r][i] for r in entailer.sources])
    return rescore_record(out, "default")


def combine_all(
    runs: Mapping[str, Mapping[str, Mapping]], verifier: Judge, decomposer: str, entailer: Judge
) -> tuple[dict[str, dict], dict[str, str]]:
    """Every response of the decomposer's run under this combination: (records by id, why each
    response that could not be combined could not)."""
    out, skipped = {}, {}
    names = {decomposer, *verifier.sources, *entailer.sources}
    for rid in runs[decomposer]:
        rec = combine(
            {r: runs[r][rid] for r in names if rid in runs[r]}, verifier, decomposer, entailer
        )
        if isinstance(rec, str):
            skipped[rid] = rec
        else:
            out[rid] = rec
    return out, skipped


__all__ = ["Judge", "combine", "combine_all", "panel", "single"]
