"""The tools a program-aided plan calls, backed by the responder's own engine and the shared
segment cutter.

- `find(description, modality)` asks the model for candidate spans over the whole video, then
  cuts each candidate and asks the entailment prompt whether the description holds there; only
  confirmed spans come back.
- `query(time, question, modality)` cuts the span and asks for one sentence about it.
- `answer(question, evidence, options)` numbers the evidence and asks for the closing reasoning,
  citing it by number, and an option letter.

A time argument is model-written text: it goes through the citation parser and the same media
checks as scoring, so a span outside the video (or anything that is not a time, such as a path)
is a failed call with its reason, never something opened. Model calls go through `ask`, which
the runner batches across items (`pipeline.rounds`) and serves from the cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..engines import Sampling
from ..inputs.datasets import render_options
from ..judges import PromptTemplate
from ..judges.calls import Call, Outcome
from ..judges.evidence import describe_evidence
from ..judges.verdicts import Observation, Spans, Synthesis
from ..media.segments import SegmentCutter, check_citation
from ..media.source import MediaRef
from ..text.citations import Citation, parse_citations
from .media import ResponderPlan, cut_media, media_note
from .program import Evidence, Span, ToolError
from .program.render import Synthesized

Ask = Callable[[Sequence[Call]], list[Outcome]]
TOOL_PROMPTS = ("tool_find", "tool_describe", "tool_synthesize", "entail")


@dataclass
class VideoTools:
    """One item's tools. `observations` and `synthesis` are what the response is written from;
    `waited` is the time spent waiting for the model (left out of the plan's wall-time limit)."""

    ask: Ask
    cutter: SegmentCutter
    ref: MediaRef
    plan: ResponderPlan  # what the model sees of the whole video (for find)
    prompts: dict[str, PromptTemplate]
    sampling: Sampling
    question: str
    options: list[str]
    observations: list[Evidence] = field(default_factory=list)
    synthesis: Synthesized | None = None
    waited: float = 0.0

    def clock(self) -> float:
        """The plan's own time: wall time minus the time spent waiting for the model."""
        return time.monotonic() - self.waited

    def _ask(self, calls: Sequence[Call]) -> list[Outcome]:
        t0 = time.monotonic()
        try:
            return self.ask(calls)
        finally:
            self.waited += time.monotonic() - t0

    def _sampling(self, tpl: PromptTemplate) -> Sampling:
        limit = tpl.verdict.max_tokens if tpl.verdict is not None else self.sampling.max_tokens
        s = self.sampling
        return Sampling(
            max_tokens=limit, temperature=s.temperature, top_p=s.top_p, top_k=s.top_k, seed=s.seed
        )

    # ------------------------------------------------------------------ spans

    def _citation(self, when: str | Span, modality: str) -> Citation:
        """The span as a checked citation; ToolError with the reason otherwise."""
        if isinstance(when, Span):
            c = Citation(modality, when.start, when.end, f"({modality}, {when.text})")
        else:
            text = str(when).strip()
            found = (
                parse_citations(f"({modality}, {text})")
                if "(" not in text and ")" not in text
                else []
            )
            if len(found) != 1 or found[0].error:
                why = found[0].error if len(found) == 1 else "not a time or a span"
                raise ToolError(f"{text[:80]!r} cannot be cut: {why}")
            c = found[0]
        problem = check_citation(c, self.ref.info, self.cutter.opts)
        if problem:
            raise ToolError(f"{c.raw} cannot be cut: {problem}")
        return c

    def _segment_call(self, tpl: PromptTemplate, cits: list[Citation], **values: str) -> Call:
        cutter, ref = self.cutter, self.ref
        evidence = describe_evidence(cits)
        return Call(
            tpl,
            tpl.render(evidence=evidence, **values),
            media_keys=tuple(cutter.segment_key(ref, c) for c in cits),
            media=lambda: tuple(cutter.cut(ref, c) for c in cits),
            evidence=evidence,
            sampling=self._sampling(tpl),
        )

    # ------------------------------------------------------------------ the tools

    def find(self, description: str, modality: str) -> list[Span]:
        tpl = self.prompts["tool_find"]
        cutter, ref, plan = self.cutter, self.ref, self.plan
        call = Call(
            tpl,
            tpl.render(
                media_note=media_note(plan.record), modality=modality, description=description
            ),
            media_keys=plan.keys,
            media=lambda: cut_media(cutter, ref, plan),
            sampling=self._sampling(tpl),
            captions=plan.captions,
        )
        (out,) = self._ask([call])
        if not out.ok:
            raise ToolError(f"find got no spans: {out.error or out.unparsed}")
        candidates = []
        for text in dict.fromkeys(out.verdict_as(Spans).spans):
            try:
                candidates.append(self._citation(text, modality))
            except ToolError:
                continue  # a candidate outside the video is not evidence
        entail = self.prompts["entail"]
        checks = self._ask([self._segment_call(entail, [c], fact=description) for c in candidates])
        return [Span(*c.times) for c, chk in zip(candidates, checks) if chk.ok and chk.yes]

    def query(self, when: str | Span, question: str, modality: str) -> Evidence:
        c = self._citation(when, modality)
        (out,) = self._ask(
            [self._segment_call(self.prompts["tool_describe"], [c], instruction=question)]
        )
        if not out.ok:
            raise ToolError(f"no observation: {out.error or out.unparsed}")
        span = Span(*c.times)
        ev = Evidence(out.verdict_as(Observation).sentence, span.text, modality)
        self.observations.append(ev)
        return ev

    def answer(
        self, question: str, evidence: list[Evidence | str], options: list[str] | None
    ) -> str:
        tpl = self.prompts["tool_synthesize"]
        numbered = "\n".join(
            f"[{k}] {e.text if isinstance(e, Evidence) else e}" for k, e in enumerate(evidence, 1)
        )
        # The options are the dataset's, whatever the plan passed: a plan cannot change the question.
        user = tpl.render(
            question=self.question,
            options=render_options(self.options),
            evidence=numbered or "(none)",
            instruction=question,
        )
        (out,) = self._ask([Call(tpl, user, sampling=self._sampling(tpl))])
        if not out.ok:
            raise ToolError(f"no synthesis: {out.error or out.unparsed}")
        synthesis = out.verdict_as(Synthesis)
        letter = synthesis.answer if synthesis.answer != "NONE" else None
        self.synthesis = Synthesized(synthesis.text, letter, tuple(evidence))
        return letter or "NONE"
