"""A yes/no verdict's confidence, `p_yes`, read from the engine's log-probabilities.

A yes/no verdict is decoded under its grammar (`{"label":"YES"}` or `{"label":"NO"}`, maybe
after a reason). Up to the label's value both answers write the same text; the token that
starts the value is where they part, the *deciding token*. `p_yes` is the probability of the
alternatives at that token that start YES, renormalised over those that start YES or NO:

    p_yes = P(YES...) / (P(YES...) + P(NO...))

The numbers an engine returns are the logits after the grammar's mask and before temperature
(the engines this run starts: vLLM's `raw_logits`, see `LOGPROBS_MODE`) or their
log-probabilities (vLLM's default `raw_logprobs`: a server someone else started; transformers).
Either way the illegal tokens have none, a sampling temperature does not change the number, and
p_yes is the same: a log-softmax subtracts one constant per position, and the ratio above
cancels it. Alternatives that start neither (a lone quote, where
a tokenizer splits it from the value) decide nothing there and are left out. Pure: no engine,
no I/O; each engine turns its own output into `Step`s.
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
METHOD = "p_yes/3"
# What vLLM engines this run starts (in process, Ray, the replicas' own servers) return as
# "log-probabilities": the logits after the grammar's mask, before temperature. p_yes needs
# only their differences at one position (see the module's docstring), and this skips the
# log-softmax over the whole vocabulary that vLLM's default (`raw_logprobs`) computes for every
# generated token of a request that asks any (measured: most of what p_yes cost).
LOGPROBS_MODE = "raw_logits"
# Alternatives asked for per generated token where the label tokens are not known (every
# token: an engine cannot be asked for one position only). After `"label":"` the grammar leaves a handful of legal tokens, the rest
# masked: 4 on Qwen's tokenizer, 3 on SmolLM2's (measured), so 5 holds them all with one to
# spare. The engines decode every alternative they return: 20 cost 1.51x (Qwen vocabulary) and
# 1.14x (SmolLM2) of batched judging without log-probabilities, 5 cost 1.03x and 1.09x (best
# of 3, 240 calls, 2 shared CPU cores).
TOP_LOGPROBS = 5
# The key whose string value is the yes/no label in every yes/no verdict type.
LABEL_KEY = '"label":"'
# vLLM's bound on `logprob_token_ids` (`vllm.sampling_params.MAX_LOGPROB_TOKEN_IDS`).
MAX_LABEL_TOKENS = 128


@dataclass(frozen=True)
class Step:
    """One generated token: its text, and the alternatives the engine reported at that
    position as (token text, log-probability) pairs, the chosen token among them."""

    token: str
    alternatives: tuple[tuple[str, float], ...]


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


def deciding_token(steps: Sequence[Step]) -> tuple[int, int] | None:
    """(index of the deciding token, offset of the label's first character in its text), or
    None when the generated text has no complete label. The last `"label":"` is the verdict's:
    a thinking model's reasoning comes before it."""
    text = "".join(s.token for s in steps)
    at = text.rfind(LABEL_KEY)
    if at < 0:
        return None
    value = at + len(LABEL_KEY)
    start = 0
    for i, step in enumerate(steps):
        end = start + len(step.token)
        if start <= value < end:
            return i, value - start
        start = end
    return None


def p_yes(steps: Sequence[Step]) -> tuple[float | None, str | None]:
    """(p_yes, None), or (None, why it cannot be read from these steps)."""
    if not steps:
        return None, "the engine returned no log-probabilities"
    found = deciding_token(steps)
    if found is None:
        return None, "no yes/no label in the generated tokens"
    index, offset = found
    step = steps[index]
    head = step.token[:offset]  # the part of the token before the label's first character
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
    try:
        return renormalise(_logsumexp(yes), _logsumexp(no)), None
    except ValueError:
        return None, "no alternative at the deciding token starts YES or NO"


def label_token_ids(vocabulary: Iterable[tuple[int, str]]) -> tuple[int, ...]:
    """The ids of every token that can be the deciding token: its text is the end of the
    label's key (or nothing) followed by the start of `YES"` or `NO"` (or the whole of it and
    more). `vocabulary` is (id, text) per token, the text as the engine decodes one id.

    Asking the engine for these tokens' log-probabilities (vLLM's `logprob_token_ids`) in place
    of the top alternatives gives `p_yes` the very alternatives it counts: at the deciding
    token the grammar leaves a subset of these legal, the rest of the vocabulary masked; the
    ones masked there come back as -inf and count for nothing. A superset is harmless."""
    out = []
    for tid, text in vocabulary:
        for k, first in enumerate(text):
            if first not in "YN":
                continue
            head, rest = text[:k], text[k:]
            word = 'YES"' if first == "Y" else 'NO"'
            if (LABEL_KEY.endswith(head) or head.endswith(LABEL_KEY)) and (
                word.startswith(rest) or rest.startswith(word)
            ):
                out.append(int(tid))
                break
    return tuple(out)


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
    "deciding_token",
    "label_token_ids",
    "p_yes",
    "renormalise",
    "wants_p_yes",
]
