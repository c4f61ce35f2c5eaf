"""Human labels as a judge: `human:PATH` is a model every stage accepts.

The engine answers each judge call of the default-mode protocol from the labels of the response
the call is for (`Request.item`), by the stage the request carries (`Request.stage`); the
prompt's fences give what the call is about (`text/labels.py` has the format):

  decontext (Rewrite)            the sentence unchanged: the labels carry no rewrite
  verifiable (SENTENCE)          the sentence's `verifiable` label
  decompose (SENTENCE)           the sentence's human `facts`
  entail (CLAIM)                 for the fact's citations S attached to the call (read from the
                                 prompt's `Evidence:` line): NO when the fact is not `entailed`;
                                 otherwise, with P the citations labelled `precise`, YES iff S
                                 holds all of P (when P is empty: iff S holds 2+ citations)

The entail rule is the one monotone answer under which the scorer's strict necessity finds
exactly the labelled citations precise: the joint call holds P (YES: recall 1); a precise
citation i is either the only member of P (alone YES) or is needed (the others without it lack
i: NO); a citation outside P alone lacks P (NO) while the others without it still hold P (YES),
so it is not precise. The same subset always gets the same answer, so the leave-one-out call of
a two-citation sentence, which is the other citation's alone call, never contradicts it. So
per fact precision = |P| / citations and recall = 1, as the labels say. Labels no answer can
honour (entailed with no precise citation among 1 or 2 citations) are refused, never guessed.

Every question the labels cannot answer is refused with the reason (`Result.error`): another
mode's whole-text rewrite, a response or sentence not in the labels, a sentence without human
facts, a fact that is not a human fact (a model decomposer's), two labelled sentences that read
the same but are labelled differently. A response whose sentences differ from its labels is
that response's error before any call (`check_response`, called by the protocol).

Lines of `murgat annotate RUN --abstained` (people's answers to a run's abstained verdicts) are
answered only where people answered (`judges/human_partial.py`); in a cascade a response the file
lacks is passed on, one it holds about other sentences is an error (`check_response(member=)`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
from collections.abc import Sequence

from pydantic import ValidationError

from ..engines.base import EngineStats, Request, Result, Timer, finish, record
from ..engines.constraints import ParseFailure, parse_verdict
from ..stages import PROTOCOL, Stage
from ..text.labels import (
    LabelError,
    LabelledFact,
    LabelledResponse,
    LabelledSentence,
    compare_sentences,
    normalize_ws,
    read_labels,
)
from ..text.partial_labels import PartialResponse, check_partial
from . import human_partial
from .human_calls import Refuse, _attached, _describe, _fence, _key, _settled, _yes_no
from .verdicts import RewrittenText

PREFIX = "human:"
# Bumped when the answering rules change: part of the identity, so cached answers follow the rules.
RULES = "human-labels/2"


def is_human(model: str) -> bool:
    return model.startswith(PREFIX)


class HumanLabels:
    """An engine (and its own lazy holder: identity, get, stats, started, close) over a label file.

    It lives with the judges, not the engines: it knows the stages and reads the judge prompts
    (fences, the evidence line) for what a call is about."""

    per_item = True  # answers depend on the response: StageJudge keys calls by item
    needs_media = False  # answers from the prompt alone: no segment is cut for it
    media_by_reference = False
    kind = "human"
    modalities = frozenset({"text", "image", "video", "audio"})
    unavailable: dict[str, str] = {}
    neutralization = None  # prompts are read, never tokenized
    preset = None

    def __init__(self, path: str | pathlib.Path):
        self.path = pathlib.Path(path)
        if not self.path.is_file():
            raise ValueError(
                f"human labels {str(self.path)!r} do not exist (model 'human:{self.path}')"
            )
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
        self.labels, self.errors = read_labels(self.path)
        # Why each id that has no usable labels has none (its first bad line).
        self.bad: dict[str, LabelError] = {}
        for e in self.errors:
            if e.id is not None and e.id not in self.labels:
                self.bad.setdefault(e.id, e)
        self.name = f"{PREFIX}{self.path}"
        self.identity = f"{RULES}:{digest}"
        self.identity_detail = {
            "kind": "human",
            "rules": RULES,
            "path": str(self.path.resolve()),
            "sha256": digest,
            "responses": len(self.labels),
            "label_errors": [str(e) for e in self.errors],
        }
        self.stats = EngineStats()
        self.started = True
        self._describe_cache: dict[int, tuple[str | None, ...]] = {}

    @classmethod
    def from_model(cls, model: str, compat: str | None = None) -> HumanLabels:
        if compat:
            raise ValueError(
                f"{model!r}: human labels hold default-mode sentences; they cannot judge "
                f"with --compat {compat}"
            )
        return cls(model[len(PREFIX) :])

    # ------------------------------------------------------------ the holder's side

    def get(self) -> HumanLabels:
        return self

    def close(self) -> None:
        pass

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        """Why this response cannot be judged from the labels (None when it can). A `member`
        of a cascade need not hold every response: one it lacks is passed on, call by call."""
        labels = self.labels.get(item_id)
        if labels is None and member and item_id not in self.bad:
            return None
        if isinstance(labels, PartialResponse):
            return check_partial(labels, tuple(sentences))
        if labels is None:
            if item_id in self.bad:
                return f"the labels for this response are unusable ({self.path.name} {self.bad[item_id]})"
            return f"response {item_id!r} is not in the labels ({self.path})"
        return compare_sentences(labels, sentences)

    # ------------------------------------------------------------ the engine's side

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        with Timer(self.stats):
            results = [self._one(r) for r in requests]
        record(self.stats, results)
        return results

    def _one(self, req: Request) -> Result:
        try:
            return self._answer(req)
        except Refuse as e:
            return Result(error=f"human labels: {e}")

    def _answer(self, req: Request) -> Result:
        stage = req.stage
        if stage not in PROTOCOL:
            raise Refuse(
                f"they answer only the scoring stages ({', '.join(PROTOCOL)}), not {stage!s}"
            )
        if req.verdict is RewrittenText:
            raise Refuse(
                "they hold default-mode sentences, not a whole-text rewrite (--compat reference)"
            )
        if stage == Stage.DECONTEXT:
            return self._verdict(req, {"sentence": _fence(req.prompt, "SENTENCE", "to rewrite")})
        labels = self._response(req)
        if stage == Stage.DECOMPOSE:
            if isinstance(labels, PartialResponse):
                raise Refuse(
                    "answers to abstained verdicts hold no decomposition (yes/no stages only)"
                )
            return self._verdict(req, {"facts": self._facts(labels, req.prompt)})
        if stage == Stage.VERIFIABLE:
            sentence = _fence(req.prompt, "SENTENCE", "to judge")
            yes = (
                _settled(human_partial.verifiable(labels, sentence, _key))
                if isinstance(labels, PartialResponse)
                else self._verifiable(labels, sentence)
            )
        else:
            claim = _fence(req.prompt, "CLAIM", "to judge")
            yes = (
                _settled(human_partial.entailed(labels, claim, _attached(req.prompt), _key))
                if isinstance(labels, PartialResponse)
                else self._entailed(labels, claim, req.prompt)
            )
        return self._verdict(req, _yes_no(req.verdict, yes))

    @staticmethod
    def _verdict(req: Request, answer: dict) -> Result:
        verdict = req.verdict
        if verdict is None:  # `_answer` takes only the verdict calls it knows
            raise Refuse("the call asks for no verdict")
        try:
            verdict.model_validate(answer)
        except ValidationError as e:
            first = e.errors()[0]
            raise Refuse(
                f"the labelled answer does not fit the {verdict.__name__} verdict: "
                f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
            ) from None
        raw = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
        if isinstance(parse_verdict(verdict, raw), ParseFailure):
            # A model's verdict is generated under the verdict's grammar, whose strings admit no
            # quote, backslash or control character: a label holding one could never be a
            # model's answer, and must not read as a parse failure.
            raise Refuse(
                f"the labelled answer cannot be written as the {verdict.__name__} verdict "
                f"(its grammar admits no quote, backslash or control character in a text): {raw[:160]}"
            )
        result = finish(req, raw, 0, 0)
        if verdict.yes_no:  # a person's label is certain: 0 or 1
            result = dataclasses.replace(result, p_yes=1.0 if answer["label"] == "YES" else 0.0)
        return result

    def _response(self, req: Request) -> LabelledResponse | PartialResponse:
        if req.item is None:
            raise Refuse("the request names no response")
        labels = self.labels.get(req.item)
        if labels is None:
            why = f" ({self.bad[req.item]})" if req.item in self.bad else ""
            raise Refuse(f"response {req.item!r} is not in the labels{why}")
        return labels

    def _sentences(self, labels: LabelledResponse, fenced: str) -> list[LabelledSentence]:
        found = [s for s in labels.sentences if _key(s.claim) == normalize_ws(fenced)]
        if not found:
            raise Refuse(
                f"no sentence of response {labels.id!r} reads {normalize_ws(fenced)!r} (was it rewritten "
                "by a decontextualizer? the labels judge the sentences as `murgat segment` prints them)"
            )
        return found

    def _verifiable(self, labels: LabelledResponse, fenced: str) -> bool:
        answers = {s.verifiable for s in self._sentences(labels, fenced)}
        if len(answers) > 1:
            raise Refuse(
                f"sentences of response {labels.id!r} that read {normalize_ws(fenced)!r} are labelled "
                "both verifiable and not"
            )
        return answers.pop()

    def _facts(self, labels: LabelledResponse, prompt: str) -> list[str]:
        fenced = _fence(prompt, "SENTENCE", "to decompose")
        found = self._sentences(labels, fenced)
        options = {tuple(f.text for f in s.facts) for s in found if s.facts is not None}
        if not options:
            s = found[0]
            why = (
                "labelled not verifiable"
                if not s.verifiable
                else "it has no citations"
                if not s.citations
                else "no facts were given"
            )
            raise Refuse(f"no human facts for the sentence {normalize_ws(fenced)!r} ({why})")
        if len(options) > 1:
            raise Refuse(
                f"sentences of response {labels.id!r} that read {normalize_ws(fenced)!r} have different "
                "human facts"
            )
        return list(options.pop())

    def _descriptions(self, s: LabelledSentence) -> tuple[str | None, ...]:
        key = id(s)
        if key not in self._describe_cache:
            self._describe_cache[key] = tuple(_describe(c) for c in s.citations)
        return self._describe_cache[key]

    def _entailed(self, labels: LabelledResponse, claim: str, prompt: str) -> bool:
        attached = _attached(prompt)
        claim_key = normalize_ws(claim)
        answers: set[bool] = set()
        refusals: list[str] = []
        with_fact = 0
        for s in labels.sentences:
            for f in s.facts or ():
                if _key(f.text) != claim_key:
                    continue
                with_fact += 1
                try:
                    subset = self._subset(s, f, attached)
                    if subset is not None:
                        answers.add(_entail_answer(f.entailed, f.precise, len(s.citations), subset))
                except Refuse as e:
                    refusals.append(str(e))
        if refusals:
            raise Refuse(refusals[0])
        if not with_fact:
            raise Refuse(
                f"{claim_key!r} is not a human fact of response {labels.id!r} (a human entailer judges "
                "the labels' facts: use the labels as the decomposer too)"
            )
        if not answers:
            raise Refuse(
                f"the attached evidence ({'; '.join(attached)}) is not among the citations of the "
                f"sentence with the fact {claim_key!r}"
            )
        if len(answers) > 1:
            raise Refuse(
                f"sentences of response {labels.id!r} with the fact {claim_key!r} and this evidence "
                "are labelled differently"
            )
        return answers.pop()

    def _subset(
        self, s: LabelledSentence, fact: LabelledFact, attached: list[str]
    ) -> frozenset[int] | None:
        """The citations of `s` a call attaches (the protocol keeps their order), or None when
        they are not a subsequence of its citations."""
        described = self._descriptions(s)
        chosen = human_partial.positions(described, attached)
        if chosen is None:
            return None
        # Citations that read the same cannot be told apart: that matters only when they carry
        # different `precise` labels and the call attaches some of them but not all.
        if not fact.entailed or fact.precise is None:  # an entailed fact's label has `precise`
            return frozenset(chosen)
        for part in set(attached):
            group = [j for j, d in enumerate(described) if d == part]
            mixed = len({fact.precise[j] for j in group}) > 1
            if mixed and attached.count(part) < len(group):
                raise Refuse(
                    f"citations {', '.join(str(j + 1) for j in group)} of the sentence both cite "
                    f"{part!r} but are labelled differently; a judge cannot tell them apart"
                )
        return frozenset(chosen)


def _entail_answer(
    entailed: bool, precise: tuple[bool, ...] | None, n: int, subset: frozenset[int]
) -> bool:
    """Whether the citations `subset` (of a sentence with `n`) entail a fact with these labels
    (see the module doc)."""
    if not entailed:
        return False
    if precise is None:
        raise ValueError("an entailed fact's label has no 'precise' (the label reader requires it)")
    needed = {i for i, p in enumerate(precise) if p}
    if needed:
        return needed <= subset
    if n < 3:
        raise Refuse(
            f"the labels say the fact is entailed but none of its {n} citation{'s' if n > 1 else ''} "
            "is needed; with fewer than 3 citations one must be"
        )
    return len(subset) >= 2


__all__ = ["HumanLabels", "PREFIX", "is_human"]
