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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..judges.panel import Rule, vote
from ..pipeline.records import rescore_record
from ..results.records import FactRecord, Panel, ScoreRecord, SentenceRecord, Verdict
from .views import norm, sentences


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


def _aligned(records: Sequence[ScoreRecord]) -> str | None:
    """Why these records of one response cannot be combined (None when they can)."""
    for rec in records:
        if rec.status != "ok" or rec.mode not in (None, "default"):
            return f"not scored in default mode in every run ({rec.status}, {rec.mode})"
    texts = [[norm(s.text) for s in sentences(rec)] for rec in records]
    if any(t != texts[0] for t in texts[1:]):
        return "the runs split the response into different sentences"
    return None


NOT_JUDGED = Verdict(value=None, error="not judged in this member's run")


def _voted(rule: Rule, members: Sequence[tuple[str, Verdict | None]]) -> Verdict:
    """A panel's verdict, as a panel run records it, from its members' recorded verdicts."""
    verdicts = {name: v if v is not None else NOT_JUDGED for name, v in members}
    tally = vote(rule, {name: v.yes for name, v in verdicts.items()})
    out = Verdict(
        value=tally.yes,
        raw="",
        panel=Panel(vote=rule.vote, **tally.as_dict(), members=verdicts),
    )
    if tally.yes is None:
        out.error = "no panel member gave a verdict"
    return out


def _verdict(judge: Judge, slot: Sequence[Verdict | None]) -> Verdict | None:
    if judge.rule is None:
        return slot[0]
    return _voted(judge.rule, list(zip(judge.members, slot)))


def _usable(sentence: SentenceRecord) -> list[bool]:
    return [bool(c.usable) for c in sentence.citations]


def _fact_in(sentence: SentenceRecord, text: str, usable: list[bool]) -> FactRecord | None:
    """The fact of a sentence (as another run recorded it) that reads `text`, when that run
    could use the same citations (otherwise its verdicts answer other questions)."""
    if _usable(sentence) != usable:
        return None
    return next((f for f in sentence.facts if norm(f.text) == text), None)


def _by_index(
    entailer: Judge, slots: Sequence[dict[str, Verdict | None]]
) -> dict[str, Verdict | None]:
    """The entailer's verdict per citation index that some member's run judged."""
    keys = sorted({k for slot in slots for k in slot}, key=int)
    return {k: _verdict(entailer, [slot[k] if k in slot else None for slot in slots]) for k in keys}


def _entail(
    fact: FactRecord, usable: list[bool], entailer: Judge, members: Sequence[SentenceRecord]
) -> None:
    """Replace a fact's entailment verdicts with the entailer's (the members' sentences given)."""
    found = [_fact_in(s, norm(fact.text), usable) for s in members]
    known = [f for f in found if f is not None]
    fact.alone, fact.without = {}, {}
    if len(known) < len(found):  # some member never judged this fact: the panel did not either
        missing = [m for m, f in zip(entailer.members, found) if f is None]
        fact.joint = Verdict(
            value=None, error=f"not judged by {', '.join(missing)} (its run has no such fact)"
        )
        return
    fact.joint = _verdict(entailer, [f.joint for f in known])
    fact.alone = _by_index(entailer, [f.alone for f in known])
    fact.without = _by_index(entailer, [f.without for f in known])


def _leave_out(sentence: SentenceRecord, *names: str) -> None:
    """Drop fields as if never written: a reader tells a sentence never decomposed by its
    missing `facts` (`views.decomposed`)."""
    for name in names:
        default = SentenceRecord.model_fields[name].get_default(call_default_factory=True)
        setattr(sentence, name, default)
    sentence.model_fields_set.difference_update(names)


def combine(
    records: Mapping[str, ScoreRecord], verifier: Judge, decomposer: str, entailer: Judge
) -> ScoreRecord | str:
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
    out = records[decomposer].model_copy(deep=True)
    per_run = {r: sentences(records[r]) for r in runs}
    for i, sent in enumerate(sentences(out)):
        usable = _usable(sent)
        if verifier.sources != (decomposer,) or verifier.rule is not None:
            sent.verifiable = _verdict(
                verifier, [per_run[r][i].verifiable for r in verifier.sources]
            )
        yes = sent.verifiable is not None and sent.verifiable.value is True
        if not (yes and usable):
            _leave_out(sent, "decomposition", "facts")
            continue
        if sent.decomposition is None:
            sent.decomposition = Verdict(
                value=None,
                error=f"not decomposed in run {decomposer} (its verifier "
                "did not find the sentence verifiable)",
            )
            sent.facts = []
            continue
        if entailer.sources == (decomposer,) and entailer.rule is None:
            continue
        for fact in sent.facts:
            _entail(fact, usable, entailer, [per_run[r][i] for r in entailer.sources])
    return rescore_record(out, "default")


def combine_all(
    runs: Mapping[str, Mapping[str, ScoreRecord]],
    verifier: Judge,
    decomposer: str,
    entailer: Judge,
) -> tuple[dict[str, ScoreRecord], dict[str, str]]:
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
