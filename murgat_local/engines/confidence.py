"""A yes/no verdict's confidence, `p_yes`, read from the engine's log-probabilities.

A yes/no verdict is decoded under its grammar (`{"label":"YES"}` or `{"label":"NO"}`, maybe
after a reason). Up to the label's value both answers write the same text; the token that
starts the value is where they part, the *deciding token*. `p_yes` is the probability of the
alternatives at that token that start YES, renormalised over those that start YES or NO:

    p_yes = P(YES...) / (P(YES...) + P(NO...))

A tokenizer may write the label's opening quote alone and the letter next: then the quote's
step already gives YES and NO a share (its alternatives `"Y`, `"N`), and the letter's step
decides the rest, P(YES) = P("Y) + P(") P(Y | "), each step over the alternatives that cross
the letter and the one chosen. Alternatives that do neither (a lone quote beside a chosen `"Y`,
another spelling of the key) lead where the engine did not go, and are left out.

The numbers an engine returns are the logits after the grammar's mask and before temperature
(the engines this run starts: vLLM's `raw_logits`, see `LOGPROBS_MODE`; transformers, read
before its sampling warpers) or their log-probabilities (vLLM's default `raw_logprobs`: a server
someone else started). Either way the illegal tokens have none, a sampling temperature or top-p
does not change the number, and p_yes is the same: a log-softmax subtracts one constant per
position, and the ratios above cancel it.

Where an engine returns its top k alternatives, they hold every legal token only when one of
them is masked (the grammar's tokens rank first): a route asks for more than the grammar leaves
legal (`legal_where_decided`, counted from the verdict's grammar and the tokenizer), and a step
whose top k hold no masked token gives no p_yes, never a renormalisation over part of what was
legal. Pure: no engine, no I/O; each engine turns its own output into `Step`s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Bumped when the way p_yes is read changes: part of every yes/no call's cache key. 2: the
# vLLM routes read every token that can start the label (`label_token_ids`); the top 5 of /1
# missed one where the grammar leaves 6 legal tokens (Gemma's vocabulary: Y, YES, N, NO and
# the byte tokens for Y and N), so a verdict cached under /1 is judged again.
# 3: the engines this run starts return the masked logits (`LOGPROBS_MODE`), not their
# log-softmax; the same p_yes up to float rounding.
# 4: transformers reads before temperature and top-p (it read after: 0.82 became 1.0); a quote
# written alone gives the letter its share at both steps; the top-k routes ask the count from
# the grammar (not 5) and give no p_yes where a legal token may be missing.
METHOD = "p_yes/4"
# What vLLM engines this run starts (in process, Ray, the replicas' own servers) return as
# "log-probabilities": the logits after the grammar's mask, before temperature. p_yes needs
# only their differences at one position (see the module's docstring), and this skips the
# log-softmax over the whole vocabulary that vLLM's default (`raw_logprobs`) computes for every
# generated token of a request that asks any (measured: most of what p_yes cost).
LOGPROBS_MODE = "raw_logits"
# The top alternatives transformers keeps per generated token beside the label tokens (it has
# every score; these only show what else the model weighed).
TOP_LOGPROBS = 5
# The most top alternatives a top-k route asks for: vLLM's default `max_logprobs`
# (`ModelConfig.max_logprobs`, 20 in vLLM 0.32), which a server someone else started most
# likely keeps, and asking more is refused. Each alternative is decoded at every generated
# token: 20 cost 1.51x (Qwen vocabulary) and 1.14x (SmolLM2) of batched judging without
# log-probabilities, 5 cost 1.03x and 1.09x (best of 3, 240 calls, 2 shared CPU cores).
MAX_TOP_LOGPROBS = 20
# The key whose string value is the yes/no label in every yes/no verdict type.
LABEL_KEY = '"label":"'
# vLLM's bound on `logprob_token_ids` (`vllm.sampling_params.MAX_LOGPROB_TOKEN_IDS`).
MAX_LABEL_TOKENS = 128


@dataclass(frozen=True)
class Step:
    """One generated token: its text, the alternatives the engine reported at that position as
    (token text, log-probability) pairs, the chosen token among them, and the chosen token's
    own number (`logprob`; None: found among the alternatives by its text). `top`: the k of a
    top-k answer; None where the alternatives hold every token that can start the label (the
    label tokens asked for by id, or a whole score row)."""

    token: str
    alternatives: tuple[tuple[str, float], ...]
    logprob: float | None = None
    top: int | None = None

    @property
    def complete(self) -> bool:
        """Whether every legal token that can start the label is among the alternatives: a
        top-k answer holds them all once it holds a masked token (the legal ones rank first)."""
        return self.top is None or any(v == -math.inf for _, v in self.alternatives)

    def chosen(self) -> float | None:
        if self.logprob is not None:
            return self.logprob
        same = [v for t, v in self.alternatives if t == self.token]
        return max(same) if same else None


def renormalise(logprob_yes: float, logprob_no: float) -> float:
    """P(YES) / (P(YES) + P(NO)) from two log-probabilities, without overflow; either may be
    -inf (no such alternative). ValueError when both are."""
    if logprob_yes == -math.inf and logprob_no == -math.inf:
        raise ValueError("neither YES nor NO has any probability")
    if logprob_no == -math.inf:
        return 1.0
    if logprob_yes == -math.inf:
        return 0.0
    return 1.0 / (1.0 + math.exp(logprob_no - logprob_yes))


def _logsumexp(values: Sequence[float]) -> float:
    finite = [v for v in values if v != -math.inf and not math.isnan(v)]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(math.fsum(math.exp(v - top) for v in finite))


def _label_at(steps: Sequence[Step]) -> tuple[int, int, list[int]] | None:
    """(where the verdict's `"label":"` starts in the generated text, where its value starts,
    each step's start), or None. The last key is the verdict's: a thinking model's reasoning
    comes before it."""
    text = "".join(s.token for s in steps)
    at = text.rfind(LABEL_KEY)
    if at < 0:
        return None
    starts, start = [], 0
    for step in steps:
        starts.append(start)
        start += len(step.token)
    return at, at + len(LABEL_KEY), starts


def deciding_token(steps: Sequence[Step]) -> tuple[int, int] | None:
    """(index of the deciding token, offset of the label's first character in its text), or
    None when the generated text has no complete label."""
    found = _label_at(steps)
    if found is None:
        return None
    _, value, starts = found
    for i, step in enumerate(steps):
        if starts[i] <= value < starts[i] + len(step.token):
            return i, value - starts[i]
    return None


def _split(step: Step, head: str) -> tuple[float, float]:
    """(log P(YES...), log P(NO...)) at a step whose text still owes `head` before the label's
    letter: the alternatives that write `head` and then the letter."""
    yes: list[float] = []
    no: list[float] = []
    for text, logprob in step.alternatives:
        if not text.startswith(head) or len(text) == len(head):
            continue
        first = text[len(head)]
        if first == "Y":
            yes.append(logprob)
        elif first == "N":
            no.append(logprob)
    return _logsumexp(yes), _logsumexp(no)


def _incomplete(step: Step, where: str) -> str:
    return (
        f"the top {step.top} alternatives at {where} hold no masked token, so a legal one that "
        "starts YES or NO may be missing (more are needed)"
    )


def p_yes(steps: Sequence[Step]) -> tuple[float | None, str | None]:
    """(p_yes, None), or (None, why it cannot be read from these steps)."""
    if not steps:
        return None, "the engine returned no log-probabilities"
    found = _label_at(steps)
    decided = deciding_token(steps)
    if found is None or decided is None:
        return None, "no yes/no label in the generated tokens"
    at, value, starts = found
    index, offset = decided
    # The steps inside the label's key before the deciding one (a quote written alone): each
    # gives YES and NO their share of what was left, and passes the rest to the chosen token.
    reach = 0.0
    yes_parts: list[float] = []
    no_parts: list[float] = []
    for j in range(index):
        if starts[j] < at:
            continue
        step = steps[j]
        if not step.complete:  # a cut top k may hide the alternatives that cross the letter
            return None, _incomplete(step, "a step inside the label's key")
        yes, no = _split(
            step, "".join(s.token for s in steps[j:index]) + steps[index].token[:offset]
        )
        if yes == -math.inf and no == -math.inf:
            continue
        chosen = step.chosen()
        if chosen is None:
            return None, "the chosen token is missing from its step's alternatives"
        total = _logsumexp([chosen, yes, no])
        yes_parts.append(reach + yes - total)
        no_parts.append(reach + no - total)
        reach += chosen - total
    step = steps[index]
    if not step.complete:
        return None, _incomplete(step, "the deciding token")
    yes, no = _split(step, step.token[:offset])
    if yes == -math.inf and no == -math.inf:
        return None, "no alternative at the deciding token starts YES or NO"
    total = _logsumexp([yes, no])
    yes_parts.append(reach + yes - total)
    no_parts.append(reach + no - total)
    try:
        return renormalise(_logsumexp(yes_parts), _logsumexp(no_parts)), None
    except ValueError:
        return None, "no alternative at the deciding token starts YES or NO"


def _label_head(text: str) -> str | None:
    """The part of a token's text before the label's letter where the token can be the
    deciding one (the end of the label's key, or nothing), else None."""
    for k, first in enumerate(text):
        if first not in "YN":
            continue
        head, rest = text[:k], text[k:]
        word = 'YES"' if first == "Y" else 'NO"'
        if (LABEL_KEY.endswith(head) or head.endswith(LABEL_KEY)) and (
            word.startswith(rest) or rest.startswith(word)
        ):
            return head
    return None


def label_token_ids(vocabulary: Iterable[tuple[int, str]]) -> tuple[int, ...]:
    """The ids of every token that can be the deciding token: its text is the end of the
    label's key (or nothing) followed by the start of `YES"` or `NO"` (or the whole of it and
    more). `vocabulary` is (id, text) per token, the text as the engine decodes one id.

    Asking the engine for these tokens' log-probabilities (vLLM's `logprob_token_ids`) in place
    of the top alternatives gives `p_yes` the very alternatives it counts: at the deciding
    token the grammar leaves a subset of these legal, the rest of the vocabulary masked; the
    ones masked there come back as -inf and count for nothing. A superset is harmless."""
    return tuple(int(tid) for tid, text in vocabulary if _label_head(text) is not None)


def _compiled(pattern: str):
    import regex  # type: ignore[import-untyped]  # partial matches (a prefix of some match)

    return regex.compile(pattern)


def _text_before_label(rx) -> str | None:
    """A text the grammar accepts up to the label's value (ending `"label":"`), built one
    character at a time, closing a string as soon as the grammar lets it; None where it has
    no label."""
    alphabet = '"' + "".join(dict.fromkeys(rx.pattern)) + "a0 "
    text = ""
    for _ in range(4096):
        if any(rx.fullmatch(text + LABEL_KEY + c, partial=True) for c in "YN"):
            return text + LABEL_KEY
        for c in alphabet:
            if rx.fullmatch(text + c, partial=True):
                text += c
                break
        else:
            return None
    return None


def _by_first(vocabulary: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for text in vocabulary:
        if text:  # a token that writes nothing (a special one decoded alone) is never legal here
            groups.setdefault(text[0], []).append(text)
    return groups


def _count(rx, groups: dict[str, list[str]], prefix: str, limit: int | None) -> int:
    n = 0
    for first, texts in groups.items():
        if not rx.fullmatch(prefix + first, partial=True):
            continue
        for text in texts:
            if rx.fullmatch(prefix + text, partial=True):
                n += 1
                if limit is not None and n > limit:
                    return n
    return n


def legal_after(vocabulary: Iterable[str], pattern: str, prefix: str) -> int:
    """How many tokens (`vocabulary`: each id's text) the grammar `pattern` allows right after
    the generated text `prefix`."""
    return _count(_compiled(pattern), _by_first(vocabulary), prefix, None)


def legal_where_decided(
    vocabulary: Sequence[str], pattern: str, limit: int | None = None
) -> int | None:
    """The most tokens the grammar leaves legal at a step where p_yes reads alternatives: each
    position inside the label's key (where a quote written alone is followed), the one where
    its value starts, and each where a token of this vocabulary that starts earlier can decide
    it. A top-k answer holds every token that can start the label there once k exceeds this.
    Counting stops past `limit`; None where the grammar has no label, or a deciding token
    would start in text this count cannot place."""
    rx = _compiled(pattern)
    before = _text_before_label(rx)
    if before is None:
        return None
    key_at = len(before) - len(LABEL_KEY)
    prefixes = {before[: key_at + i] for i in range(len(LABEL_KEY) + 1)}
    for head in {h for t in vocabulary if (h := _label_head(t)) is not None}:
        if len(head) > len(LABEL_KEY):
            if not before.endswith(head):
                return None
            prefixes.add(before[: len(before) - len(head)])
    groups = _by_first(vocabulary)
    return max(_count(rx, groups, p, limit) for p in prefixes)


def wants_p_yes(verdict: type | None) -> bool:
    """Whether a request's verdict type is a yes/no label whose confidence is read."""
    return bool(verdict is not None and getattr(verdict, "yes_no", False))


__all__ = [
    "LABEL_KEY",
    "LOGPROBS_MODE",
    "METHOD",
    "Step",
    "TOP_LOGPROBS",
    "MAX_LABEL_TOKENS",
    "MAX_TOP_LOGPROBS",
    "deciding_token",
    "label_token_ids",
    "legal_after",
    "legal_where_decided",
    "p_yes",
    "renormalise",
    "wants_p_yes",
]
