"""Each engine's log-probabilities as `confidence.Step`s (one per generated token), and what a
tokenizer's vocabulary says about reading them (`LabelTokens`).

vLLM in-process and Ray Data return, per generated token, a map token id -> (logprob, rank,
decoded token) holding the asked alternatives and the chosen token; `vllm serve` returns the
OpenAI shape (`logprobs.content[i]` with `token`, `logprob` and `top_logprobs`); transformers
returns each step's scores after the grammar's mask and before its sampling warpers, read here
the same way. `top`: the k of a top-k answer (None where the label tokens were asked by id).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

from .confidence import (
    MAX_LABEL_TOKENS,
    MAX_TOP_LOGPROBS,
    TOP_LOGPROBS,
    Step,
    label_token_ids,
    legal_where_decided,
)


def _logprob(value) -> float:
    x = float(value)
    # A JSON server writes -inf as a large negative number (vLLM: -9999.0): none is meant.
    return -math.inf if math.isnan(x) or x <= -9999.0 else x


def from_vllm(
    token_ids: Sequence[int], logprobs: Sequence[Mapping] | None, top: int | None = None
) -> list[Step] | None:
    """From `CompletionOutput.token_ids` and `.logprobs` (token id -> `Logprob`), or from a
    Ray Data row's `generated_tokens` and `logprobs` (the same maps, as dicts)."""
    if not logprobs:
        return None
    steps = []
    for chosen, alternatives in zip(token_ids, logprobs):
        if not alternatives:
            return None
        pairs = []
        token, value = None, None
        for tid, lp in alternatives.items():
            text = lp["decoded_token"] if isinstance(lp, Mapping) else lp.decoded_token
            v = _logprob(lp["logprob"] if isinstance(lp, Mapping) else lp.logprob)
            pairs.append((text or "", v))
            if int(tid) == int(chosen):
                token, value = text or "", v
        if token is None:
            return None
        steps.append(Step(token, tuple(pairs), value, top))
    return steps


def from_openai(choice: Mapping, top: int | None = None) -> list[Step] | None:
    """From one chat-completion choice (`choices[0]`) asked with `logprobs`, and `top_logprobs`
    (`top`) or the label tokens by id."""
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    steps = []
    for entry in content:
        tops = entry.get("top_logprobs") or []
        pairs = [(t.get("token") or "", _logprob(t.get("logprob"))) for t in tops]
        chosen = (entry.get("token") or "", _logprob(entry.get("logprob")))
        # The server lists the chosen token among `top_logprobs` too: counted twice, it took
        # p_yes from 0.276 to 0.166 on SmolLM2. Added only where the top alternatives miss it.
        if chosen not in pairs:
            pairs.append(chosen)
        steps.append(Step(chosen[0], tuple(pairs), chosen[1], top))
    return steps


def from_scores(
    token_ids: Sequence[int], scores: Sequence, decode, labels: Sequence[int] | None = None
) -> list[Step] | None:
    """From transformers: one score row per generated token (after the grammar's mask, before
    temperature and top-p: masked tokens are -inf); `decode` turns one id into its text. The
    alternatives of a step: the top 5, and with `labels` (`label_ids`) every label token the
    grammar leaves legal there, so no token that can start YES or NO is missed (the vLLM routes
    read exactly those); without them the step is a top-5 answer."""
    import torch

    if not scores:
        return None
    steps = []
    for chosen, row in zip(token_ids, scores):
        logprobs = torch.log_softmax(row[0].float(), dim=-1)
        _, best = torch.topk(logprobs, min(TOP_LOGPROBS, logprobs.shape[-1]))
        kept = {*best.tolist(), int(chosen)}  # a masked one among the top shows they are whole
        ids = list(dict.fromkeys([*best.tolist(), *(labels or ()), int(chosen)]))
        values = logprobs[ids].tolist()
        pairs = tuple(
            (decode(t), v) for t, v in zip(ids, values) if v != float("-inf") or t in kept
        )
        top = None if labels else TOP_LOGPROBS
        steps.append(Step(decode(int(chosen)), pairs, float(logprobs[int(chosen)]), top))
    return steps


class LabelTokens:
    """A tokenizer's vocabulary as p_yes needs it, found once: each id's text (decoded alone),
    the ids that can decide a yes/no label, and per verdict grammar how many top alternatives
    a route asks for. `texts` stands in for a tokenizer (tests)."""

    def __init__(self, tokenizer, texts: Sequence[str] | None = None):
        self.tokenizer = tokenizer
        if texts is not None:
            self.__dict__["texts"] = list(texts)
        self._top: dict[str | None, int] = {}

    @functools.cached_property
    def texts(self) -> list[str]:
        return self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])

    @functools.cached_property
    def ids(self) -> tuple[int, ...] | None:
        """The ids of the tokens that can decide a yes/no verdict
        (`confidence.label_token_ids`); None when there are none or more than vLLM takes, and
        the engine asks for the top alternatives instead.

        vLLM's own text for an alternative is this one, or with a leading space put back (a
        SentencePiece vocabulary): a leading space never starts a label, so the ids found here
        hold every id found from vLLM's text."""
        found = label_token_ids(enumerate(self.texts))
        return found if 0 < len(found) <= MAX_LABEL_TOKENS else None

    def top_logprobs(self, regex: str | None) -> int:
        """The k a top-k route asks for under the grammar `regex`: one more than the tokens it
        leaves legal where p_yes reads (`confidence.legal_where_decided`), so a whole answer
        shows a masked token; at most `MAX_TOP_LOGPROBS`, which it also is where the count
        cannot be made (p_yes then tells a whole answer from a cut one at each step)."""
        if regex not in self._top:
            legal = (
                None
                if regex is None
                else legal_where_decided(self.texts, regex, limit=MAX_TOP_LOGPROBS)
            )
            self._top[regex] = (
                MAX_TOP_LOGPROBS if legal is None else min(legal + 1, MAX_TOP_LOGPROBS)
            )
        return self._top[regex]


def top_logprobs_for(labels: LabelTokens | None, regex: str | None) -> int:
    """`labels.top_logprobs(regex)`, or the most a vLLM server returns where the vocabulary is
    not known here."""
    return MAX_TOP_LOGPROBS if labels is None else labels.top_logprobs(regex)


def label_ids(tokenizer) -> tuple[int, ...] | None:
    """`LabelTokens(tokenizer).ids`, for a tokenizer read once."""
    return LabelTokens(tokenizer).ids


__all__ = [
    "LabelTokens",
    "from_openai",
    "from_scores",
    "from_vllm",
    "label_ids",
    "top_logprobs_for",
]
