"""The MURGAT protocol over a chunk of responses, one stage at a time across the whole chunk.

  prepare      clean, split, parse citations, check them against the media (no model)
  decontext    default: each sentence rewritten from the sentences before it
               reference: the whole answer rewritten at once, then split
  verifiable   subtask 1, a YES/NO per sentence
  decompose    subtask 2, atomic facts of each verifiable sentence that has citations
  entail       subtask 3, the cited segments against each fact (joint, alone, and for the
               default mode's strict necessity, leave-one-out)

Every stage hands all of the chunk's calls to its judge at once. A response's problems
(unreadable video, ...) become its error; a call's problems (unparsed verdict, refused
modality) are recorded where they belong and counted, never read as NO.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..inputs.responses import InputError, ResponseItem
from ..judges import PromptTemplate, load_prompt
from ..media.segments import SegmentCutter, check_citation
from ..media.source import MediaError, MediaRef
from ..metrics.scores import (
    FactScore,
    ResponseScore,
    SentenceScore,
    score_fact_default,
    score_fact_reference,
    score_response,
)
from ..text.citations import (
    Citation,
    parse_citations,
    parse_citations_reference,
    strip_citations,
    strip_citations_reference,
)
from ..text.clean import clean_generation, clean_generation_reference
from ..text.sentences import split_sentences, split_sentences_reference
from .judging import Call, Outcome, StageJudge

STAGES = ("decontext", "verifiable", "decompose", "entail")
REFERENCE = "reference"


@dataclass
class FactState:
    text: str
    joint: Outcome | None = None
    alone: dict[int, Outcome] = field(default_factory=dict)
    without: dict[int, Outcome] = field(default_factory=dict)
    score: FactScore | None = None


@dataclass
class SentenceState:
    original: str
    text: str  # what the judges read: citations removed, decontextualized in default mode
    citations: list[Citation]
    issues: list[str | None]  # per citation: why it cannot be checked (None = usable)
    extracted: list[bool]  # reference mode: False when the segment could not be cut
    decontext: Outcome | None = None
    decontext_note: str | None = None
    verifiable: Outcome | None = None
    decomposition: Outcome | None = None
    facts: list[FactState] = field(default_factory=list)
    unscored: str | None = None  # why the facts are unknown
    score: SentenceScore | None = None

    @property
    def is_verifiable(self) -> bool | None:
        if self.verifiable is None or not self.verifiable.ok:
            return None
        return self.verifiable.verdict.yes

    @property
    def usable(self) -> list[bool]:
        return [i is None for i in self.issues]


@dataclass
class ResponseState:
    item: ResponseItem
    source: MediaRef | None = None
    error: str | None = None
    reasoning: str = ""
    answer_letter: str | None = None
    decontext_text: Outcome | None = None
    text_note: str | None = None
    sentences: list[SentenceState] = field(default_factory=list)
    score: ResponseScore | None = None


@dataclass(frozen=True)
class ProtocolOptions:
    compat: str | None = None  # None (default mode) or "reference"
    decontextualize: bool = True

    @property
    def reference(self) -> bool:
        return self.compat == REFERENCE


def _fmt(t: float) -> str:
    """Seconds as M:SS or H:MM:SS, with decimals only when the time has them."""
    whole = int(t)
    frac = round(t - whole, 3)
    h, rem = divmod(whole, 3600)
    m, sec = divmod(rem, 60)
    tail = f"{sec:02d}" + (f"{frac:.3f}".lstrip("0").rstrip("0") if frac else "")
    return f"{h}:{m:02d}:{tail}" if h else f"{m}:{tail}"


def describe_evidence(citations: Sequence[Citation]) -> str:
    parts = []
    for c in citations:
        when = _fmt(c.start) if c.is_point else f"{_fmt(c.start)}-{_fmt(c.end)}"
        if c.modality == "visual":
            what = "a video frame at" if c.is_point else "video frames from"
        else:
            what = "audio from"
        parts.append(f"{what} {when}")
    return "; ".join(parts) + " (attached, in this order)"


class Protocol:
    def __init__(
        self,
        options: ProtocolOptions,
        judges: dict[str, StageJudge],
        cutter: SegmentCutter,
        prompts: dict[str, PromptTemplate] | None = None,
    ):
        self.options = options
        self.judges = judges
        self.cutter = cutter
        names = ("decontextualize", "decontextualize_text", "verifiable", "decompose", "entail")
        self.prompts = prompts or {n: load_prompt(n) for n in names}

    # ---------------------------------------------------------------- prepare (no model)

    def prepare(self, item: ResponseItem | InputError) -> ResponseState | InputError:
        if isinstance(item, InputError):
            return item
        state = ResponseState(item)
        try:
            state.source = self.cutter.source(item.video)
        except MediaError as e:
            state.error = str(e)
            return state
        cleaned = (clean_generation_reference if self.options.reference else clean_generation)(
            item.generation
        )
        state.reasoning = cleaned.reasoning
        state.answer_letter = cleaned.answer_letter
        if not self.options.reference:
            state.sentences = [self._sentence(s) for s in split_sentences(state.reasoning)]
        return state

    def _sentence(self, original: str) -> SentenceState:
        ref = self.options.reference
        cits = (parse_citations_reference if ref else parse_citations)(original)
        text = strip_citations_reference(original) if ref else strip_citations(original)
        return SentenceState(original, text or original, cits, [], [])

    def _check(self, state: ResponseState) -> None:
        info = state.source.info
        opts = self.cutter.opts
        for s in state.sentences:
            s.issues, s.extracted = [], []
            for c in s.citations:
                issue = check_citation(c, info, opts)
                if self.options.reference:
                    # The reference counts an unparseable time as NO, and drops the fact
                    # when a segment fails to extract (range beyond the media, no audio).
                    s.issues.append(c.error)
                    s.extracted.append(c.error is not None or issue is None)
                else:
                    s.issues.append(issue)
                    s.extracted.append(issue is None)

    # ---------------------------------------------------------------- stages

    def run(self, items: Sequence[ResponseItem | InputError], progress=None) -> list:
        states = [self.prepare(i) for i in items]
        live = [s for s in states if isinstance(s, ResponseState) and s.error is None]
        self._stage_decontext(live)
        for s in live:
            self._check(s)
        self._stage_verifiable(live)
        self._stage_decompose(live)
        self._stage_entail(live)
        for s in live:
            self._score(s)
        return states

    def _stage_decontext(self, states: list[ResponseState]) -> None:
        judge = self.judges["decontext"]
        if self.options.reference:
            if self.options.decontextualize:
                tpl = self.prompts["decontextualize_text"]
                calls = [Call(tpl, tpl.render(text=s.reasoning)) for s in states]
                for s, out in zip(states, judge.run(calls)):
                    s.decontext_text = out
                    s.text_note = self._accept_rewrite(s, out)
            for s in states:
                text = s.decontext_text.verdict.text if s.text_note is None and s.decontext_text else s.reasoning
                seen: dict[str, SentenceState] = {}
                for sent in split_sentences_reference(text):
                    # The reference keys its evaluations by sentence text: repeats count once.
                    seen.setdefault(sent, self._sentence(sent))
                s.sentences = list(seen.values())
            return
        if not self.options.decontextualize:
            return
        tpl = self.prompts["decontextualize"]
        calls, targets = [], []
        for s in states:
            for i, sent in enumerate(s.sentences):
                if i == 0:
                    continue  # nothing earlier to resolve a reference against
                context = "\n".join(p.text for p in s.sentences[max(0, i - 8) : i])
                calls.append(Call(tpl, tpl.render(context=context, sentence=sent.text)))
                targets.append(sent)
        for sent, out in zip(targets, judge.run(calls)):
            sent.decontext = out
            if out.ok:
                rewrite = out.verdict.sentence.strip()
                sent.decontext_note = rewrite_problem(sent.text, rewrite)
                if sent.decontext_note is None:
                    sent.text = rewrite

    @staticmethod
    def _accept_rewrite(state: ResponseState, out: Outcome) -> str | None:
        """Reference mode: keep the rewrite only if it kept every citation, in order."""
        if not out.ok:
            return f"decontextualization unusable ({out.unparsed or out.error}); original text kept"
        before = [c.raw for c in parse_citations_reference(state.reasoning)]
        after = [c.raw for c in parse_citations_reference(out.verdict.text)]
        if before != after:
            return "decontextualization changed the citations; original text kept"
        return None

    def _stage_verifiable(self, states: list[ResponseState]) -> None:
        tpl = self.prompts["verifiable"]
        targets = [sent for s in states for sent in s.sentences]
        calls = [Call(tpl, tpl.render(sentence=t.text)) for t in targets]
        for sent, out in zip(targets, self.judges["verifiable"].run(calls)):
            sent.verifiable = out

    def _stage_decompose(self, states: list[ResponseState]) -> None:
        tpl = self.prompts["decompose"]
        targets = [t for s in states for t in s.sentences if t.is_verifiable and t.citations]
        calls = [Call(tpl, tpl.render(sentence=t.text)) for t in targets]
        for sent, out in zip(targets, self.judges["decompose"].run(calls)):
            sent.decomposition = out
            facts = list(dict.fromkeys(f.strip() for f in out.verdict.facts if f.strip())) if out.ok else []
            sent.facts = [FactState(f) for f in facts]
            if not facts:
                # Without its facts the sentence's attribution is unknown: unscored, not a guess.
                why = out.unparsed or out.error or "no facts"
                sent.unscored = f"decomposition unusable ({why})"

    def _entail_call(self, state: ResponseState, fact: FactState, cits: list[Citation]) -> Call:
        tpl = self.prompts["entail"]
        src = state.source
        evidence = describe_evidence(cits)
        keys = tuple(self.cutter.segment_key(src, c) for c in cits)
        cutter = self.cutter
        return Call(
            tpl,
            tpl.render(evidence=evidence, fact=fact.text),
            media_keys=keys,
            media=lambda: tuple(cutter.cut(src, c) for c in cits),
            evidence=evidence,
        )

    def _stage_entail(self, states: list[ResponseState]) -> None:
        judge = self.judges["entail"]
        calls: list[Call] = []
        slots: list[tuple[FactState, str, int]] = []
        for s in states:
            for sent in s.sentences:
                if not (sent.is_verifiable and sent.citations):
                    continue
                ok_idx = [i for i, (u, e) in enumerate(zip(sent.usable, sent.extracted)) if u and e]
                n = len(sent.citations)
                for fact in sent.facts:
                    if self.options.reference:
                        if not all(e for u, e in zip(sent.usable, sent.extracted) if u):
                            continue  # dropped by the reference
                        for i in ok_idx:
                            calls.append(self._entail_call(s, fact, [sent.citations[i]]))
                            slots.append((fact, "alone", i))
                        if n > 1 and ok_idx:
                            calls.append(self._entail_call(s, fact, [sent.citations[i] for i in ok_idx]))
                            slots.append((fact, "joint", -1))
                        continue
                    if not ok_idx:
                        continue
                    calls.append(self._entail_call(s, fact, [sent.citations[i] for i in ok_idx]))
                    slots.append((fact, "joint", -1))
                    if n > 1 and len(ok_idx) > 1:
                        for i in ok_idx:
                            calls.append(self._entail_call(s, fact, [sent.citations[i]]))
                            slots.append((fact, "alone", i))
        self._apply(slots, judge.run(calls))
        if self.options.reference:
            return
        # Strict necessity: for a citation that does not entail alone while the joint does,
        # ask whether the others still entail the fact without it.
        calls, slots = [], []
        for s in states:
            for sent in s.sentences:
                if not (sent.is_verifiable and sent.citations):
                    continue
                ok_idx = [i for i, u in enumerate(sent.usable) if u]
                if len(ok_idx) < 2:
                    continue
                for fact in sent.facts:
                    if not (fact.joint and fact.joint.ok and fact.joint.verdict.yes):
                        continue
                    for i in ok_idx:
                        a = fact.alone.get(i)
                        if a is not None and a.ok and not a.verdict.yes:
                            rest = [sent.citations[j] for j in ok_idx if j != i]
                            calls.append(self._entail_call(s, fact, rest))
                            slots.append((fact, "without", i))
        self._apply(slots, judge.run(calls))

    @staticmethod
    def _apply(slots, outcomes) -> None:
        for (fact, kind, i), out in zip(slots, outcomes):
            if kind == "joint":
                fact.joint = out
            elif kind == "alone":
                fact.alone[i] = out
            else:
                fact.without[i] = out

    # ---------------------------------------------------------------- scores

    def _score(self, state: ResponseState) -> None:
        sentences = []
        for sent in state.sentences:
            facts: list[FactScore] = []
            if sent.is_verifiable and sent.citations:
                for fact in sent.facts:
                    fact.score = score_fact(sent, fact, self.options.reference)
                    facts.append(fact.score)
            sent.score = SentenceScore(sent.is_verifiable, bool(sent.citations), tuple(facts), sent.unscored)
            sentences.append(sent.score)
        state.score = score_response(sentences, reference=self.options.reference)


def _yes(out: Outcome | None) -> bool | None:
    return None if out is None or not out.ok else out.verdict.yes


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
    for name, out in [("joint", fact.joint), *[(f"citation {i + 1}", o) for i, o in fact.alone.items()],
                      *[(f"without citation {i + 1}", o) for i, o in fact.without.items()]]:
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


__all__ = [
    "Protocol", "ProtocolOptions", "ResponseState", "SentenceState", "FactState", "STAGES",
    "REFERENCE", "describe_evidence", "score_fact",
]
