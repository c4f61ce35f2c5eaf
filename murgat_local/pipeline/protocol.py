"""The MURGAT protocol over a chunk of responses, one stage at a time across the whole chunk.

  prepare      clean, split, parse citations, check them against the media (no model)
  decontext    default: each sentence rewritten from the sentences before it
               reference: the whole answer rewritten at once, then split
  verifiable   subtask 1, a YES/NO per sentence
  decompose    subtask 2, atomic facts of each verifiable sentence that has citations
  entail       subtask 3, the cited segments against each fact (joint, alone, and for the
               default mode's strict necessity, leave-one-out)

Every stage hands all of the chunk's calls to its judge at once. A response's problems
(unreadable video, or any exception while its calls are built or its verdicts applied) become
its error, naming the exception's type, and the other responses go on; a call's problems
(unparsed verdict, refused modality) are recorded where they belong and counted, never read
as NO.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from ..grading import FactScore, SentenceScore, score_response
from ..inputs.responses import InputError, ResponseItem
from ..judges import PromptTemplate, load_prompt
from ..judges.evidence import describe_evidence
from ..judges.verdicts import AtomicFacts, Rewrite, RewrittenText
from ..media.segments import SegmentCutter, SegmentRef, check_citation
from ..media.source import MediaError
from ..stages import Stage
from ..text.citations import Citation, parse_citations_reference
from ..text.segment import Sentence, segment, split
from .judging import Call, Judge, Outcome
from .scoring import rewrite_problem, score_fact
from .state import REFERENCE, FactState, ProtocolOptions, ResponseState, SentenceState

Collected = Iterable[tuple[Call, Callable[[Outcome], None]]]


def _fail(state: ResponseState, where: str, e: BaseException) -> None:
    state.error = f"failed while {where}: {type(e).__name__}: {e}"


class Protocol:
    def __init__(
        self,
        options: ProtocolOptions,
        judges: dict[str, Judge],
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
            self._prepare(state)
        except MediaError as e:
            state.error = str(e)
        except Exception as e:  # any other fault stays with its item too
            _fail(state, "preparing the response", e)
        return state

    def _prepare(self, state: ResponseState) -> None:
        state.source = self.cutter.source(state.item.video)
        o = self.options
        # What is judged and how it is split is `text.segment`'s to decide (`murgat segment`
        # prints the same); a reference-mode rewrite is split by its `split` after the stage.
        seg = segment(
            state.item.generation,
            compat=o.compat,
            parse_reasoning=o.parse_reasoning,
            decontextualize=o.decontextualize,
            decontextualized_text=state.item.record.get("decontextualized_text"),
        )
        state.reasoning = seg.text
        state.answer_letter = seg.answer_letter
        state.given_text = seg.given_text
        state.sentences = [self._sentence(s) for s in seg.sentences]

    @staticmethod
    def _sentence(s: Sentence) -> SentenceState:
        return SentenceState(s.text, s.claim, list(s.citations), [], [], list(s.unparsed))

    def _check(self, state: ResponseState) -> None:
        info = state.video.info
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
        responses = [s for s in states if isinstance(s, ResponseState)]
        self._check_items(responses)
        self._stage_decontext(responses)
        self._each(responses, "checking citations", self._check)
        self._stage(Stage.VERIFIABLE, responses, self._collect_verifiable)
        self._stage(Stage.DECOMPOSE, responses, self._collect_decompose)
        self._stage(Stage.ENTAIL, responses, self._collect_entail)
        if not self.options.reference:
            self._stage(Stage.ENTAIL, responses, self._collect_without)
        self._each(responses, "scoring", self._score)
        return states

    def _check_items(self, states: list[ResponseState]) -> None:
        """Before any call: an engine that answers per item from what it knows of each item
        (human labels) checks the response's sentences, as split here, against it; a mismatch
        is that response's error."""
        checks = {id(j.engine): j.engine.check_response for j in self.judges.values()}
        for st in states:
            for check in checks.values():
                if st.error is not None:
                    break
                try:
                    st.error = check(st.item.id, [s.original for s in st.sentences])
                except Exception as e:
                    _fail(st, "checking the response against the labels", e)

    @staticmethod
    def _each(states: list[ResponseState], where: str, fn: Callable[[ResponseState], None]) -> None:
        for st in states:
            if st.error is None:
                try:
                    fn(st)
                except Exception as e:
                    _fail(st, where, e)

    def _stage(
        self,
        stage: Stage,
        states: list[ResponseState],
        collect: Callable[[ResponseState], Collected],
    ) -> None:
        """One judge run over every live response's calls; each response's calls are built,
        and its verdicts applied, under its own guard."""
        calls: list[Call] = []
        appliers: list[tuple[ResponseState, Callable[[Outcome], None]]] = []
        for st in states:
            if st.error is not None:
                continue
            try:
                pairs = list(collect(st))
            except Exception as e:
                _fail(st, f"building the {stage} calls", e)
                continue
            for call, apply in pairs:
                call.item = st.item.id  # which response: read only by per-item engines
                calls.append(call)
                appliers.append((st, apply))
        if not calls:
            return
        for (st, apply), out in zip(appliers, self.judges[stage].run(calls)):
            if st.error is None:
                try:
                    apply(out)
                except Exception as e:
                    _fail(st, f"reading the {stage} verdicts", e)

    def _stage_decontext(self, states: list[ResponseState]) -> None:
        if self.options.reference:
            if self.options.decontextualize:
                self._stage(Stage.DECONTEXT, states, self._collect_text_rewrite)
                self._each(states, "splitting the decontextualized text", self._split_rewrite)
        elif self.options.decontextualize:
            self._stage(Stage.DECONTEXT, states, self._collect_rewrites)

    def _collect_text_rewrite(self, s: ResponseState) -> Collected:
        if s.given_text is not None:
            return
        tpl = self.prompts["decontextualize_text"]

        def apply(out: Outcome) -> None:
            s.decontext_text = out
            s.text_note = self._accept_rewrite(s, out)

        yield Call(tpl, tpl.render(text=s.reasoning)), apply

    def _split_rewrite(self, s: ResponseState) -> None:
        """An accepted whole-text rewrite replaces the sentences `segment` split from the text
        (or from the input's own decontextualized_text, which is never rewritten)."""
        if s.decontext_text is not None and s.text_note is None:
            s.sentences = [
                self._sentence(sent)
                for sent in split(
                    s.decontext_text.verdict_as(RewrittenText).text, self.options.compat
                )
            ]

    def _collect_rewrites(self, s: ResponseState) -> Collected:
        tpl = self.prompts["decontextualize"]
        for i, sent in enumerate(s.sentences):
            if i == 0:
                continue  # nothing earlier to resolve a reference against
            context = "\n".join(p.text for p in s.sentences[max(0, i - 8) : i])
            yield (
                Call(tpl, tpl.render(context=context, sentence=sent.text)),
                self._rewrite_applier(sent),
            )

    @staticmethod
    def _rewrite_applier(sent: SentenceState) -> Callable[[Outcome], None]:
        def apply(out: Outcome) -> None:
            sent.decontext = out
            if out.ok:
                rewrite = out.verdict_as(Rewrite).sentence.strip()
                sent.decontext_note = rewrite_problem(sent.text, rewrite)
                if sent.decontext_note is None:
                    sent.text = rewrite

        return apply

    @staticmethod
    def _accept_rewrite(state: ResponseState, out: Outcome) -> str | None:
        """Reference mode: keep the rewrite only if it kept every citation, in order."""
        if not out.ok:
            return f"decontextualization unusable ({out.unparsed or out.error}); original text kept"
        before = [c.raw for c in parse_citations_reference(state.reasoning)]
        after = [c.raw for c in parse_citations_reference(out.verdict_as(RewrittenText).text)]
        if before != after:
            return "decontextualization changed the citations; original text kept"
        return None

    def _collect_verifiable(self, s: ResponseState) -> Collected:
        tpl = self.prompts["verifiable"]
        for sent in s.sentences:
            yield (
                Call(tpl, tpl.render(sentence=sent.text)),
                partial(setattr, sent, "verifiable"),
            )

    def _collect_decompose(self, s: ResponseState) -> Collected:
        tpl = self.prompts["decompose"]
        for sent in s.sentences:
            if sent.is_verifiable and sent.citations:
                yield Call(tpl, tpl.render(sentence=sent.text)), self._facts_applier(sent)

    @staticmethod
    def _facts_applier(sent: SentenceState) -> Callable[[Outcome], None]:
        def apply(out: Outcome) -> None:
            sent.decomposition = out
            facts = (
                list(
                    dict.fromkeys(f.strip() for f in out.verdict_as(AtomicFacts).facts if f.strip())
                )
                if out.ok
                else []
            )
            sent.facts = [FactState(f) for f in facts]
            if not facts:
                # Without its facts the sentence's attribution is unknown: unscored, not a guess.
                sent.unscored = (
                    f"decomposition unusable ({out.unparsed or out.error or 'no facts'})"
                )

        return apply

    def _entail_call(self, state: ResponseState, fact: FactState, cits: list[Citation]) -> Call:
        tpl = self.prompts["entail"]
        src = state.video
        evidence = describe_evidence(cits)
        keys = tuple(self.cutter.segment_key(src, c) for c in cits)
        cutter = self.cutter
        return Call(
            tpl,
            tpl.render(evidence=evidence, fact=fact.text),
            media_keys=keys,
            media=lambda: tuple(cutter.cut(src, c) for c in cits),
            evidence=evidence,
            segments=tuple(SegmentRef(src, c, cutter.opts) for c in cits),
        )

    @staticmethod
    def _slot(fact: FactState, kind: str, i: int = -1) -> Callable[[Outcome], None]:
        def apply(out: Outcome) -> None:
            if kind == "joint":
                fact.joint = out
            elif kind == "alone":
                fact.alone[i] = out
            else:
                fact.without[i] = out

        return apply

    def _collect_entail(self, s: ResponseState) -> Collected:
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
                        yield (
                            self._entail_call(s, fact, [sent.citations[i]]),
                            self._slot(fact, "alone", i),
                        )
                    if n > 1 and ok_idx:
                        yield (
                            self._entail_call(s, fact, [sent.citations[i] for i in ok_idx]),
                            self._slot(fact, "joint"),
                        )
                    continue
                if not ok_idx:
                    continue
                yield (
                    self._entail_call(s, fact, [sent.citations[i] for i in ok_idx]),
                    self._slot(fact, "joint"),
                )
                if n > 1 and len(ok_idx) > 1:
                    for i in ok_idx:
                        yield (
                            self._entail_call(s, fact, [sent.citations[i]]),
                            self._slot(fact, "alone", i),
                        )

    def _collect_without(self, s: ResponseState) -> Collected:
        """Strict necessity: for a citation that does not entail alone while the joint does,
        ask whether the others still entail the fact without it."""
        for sent in s.sentences:
            if not (sent.is_verifiable and sent.citations):
                continue
            ok_idx = [i for i, u in enumerate(sent.usable) if u]
            if len(ok_idx) < 2:
                continue
            for fact in sent.facts:
                if not (fact.joint and fact.joint.ok and fact.joint.yes):
                    continue
                for i in ok_idx:
                    a = fact.alone.get(i)
                    if a is not None and a.ok and not a.yes:
                        rest = [sent.citations[j] for j in ok_idx if j != i]
                        yield self._entail_call(s, fact, rest), self._slot(fact, "without", i)

    # ---------------------------------------------------------------- scores

    def _score(self, state: ResponseState) -> None:
        sentences = []
        for sent in state.sentences:
            facts: list[FactScore] = []
            if sent.is_verifiable and sent.citations:
                for fact in sent.facts:
                    fact.score = score_fact(sent, fact, self.options.reference)
                    facts.append(fact.score)
            sent.score = SentenceScore(
                sent.is_verifiable, bool(sent.citations), tuple(facts), sent.unscored
            )
            sentences.append(sent.score)
        state.score = score_response(sentences, reference=self.options.reference)


__all__ = [
    "Protocol",
    "ProtocolOptions",
    "ResponseState",
    "SentenceState",
    "FactState",
    "REFERENCE",
    "describe_evidence",
    "score_fact",
]
