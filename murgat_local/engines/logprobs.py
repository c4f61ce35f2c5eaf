"""Each engine's log-probabilities as `confidence.Step`s (one per generated token).

vLLM in-process and Ray Data return, per generated token, a map token id -> (logprob, rank,
decoded token) holding the top alternatives and the chosen token; `vllm serve` returns the
OpenAI shape (`logprobs.content[i]` with `token`, `logprob` and `top_logprobs`); transformers
returns the scores after its logits processors (the grammar's mask), read here the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .confidence import MAX_LABEL_TOKENS, TOP_LOGPROBS, Step, label_token_ids


def _logprob(value) -> float:
    x = float(value)
    # A JSON server writes -inf as a large negative number (vLLM: -9999.0): none is meant.
    return -math.inf if math.isnan(x) or x <= -9999.0 else x


def from_vllm(token_ids: Sequence[int], logprobs: Sequence[Mapping] | None) -> list[Step] | None:
    """From `CompletionOutput.token_ids` and `.logprobs` (token id -> `Logprob`), or from a
    Ray Data row's `generated_tokens` and `logprobs` (the same maps, as dicts)."""
    if not logprobs:
        return None
    steps = []
    for chosen, alternatives in zip(token_ids, logprobs):
        if not alternatives:
            return None
        pairs = []
        token = None
        for tid, lp in alternatives.items():
            text = lp["decoded_token"] if isinstance(lp, Mapping) else lp.decoded_token
            value = lp["logprob"] if isinstance(lp, Mapping) else lp.logprob
            pairs.append((text or "", _logprob(value)))
            if int(tid) == int(chosen):
                token = text or ""
        if token is None:
            return None
        steps.append(Step(token, tuple(pairs)))
    return steps


def from_openai(choice: Mapping) -> list[Step] | None:
    """From one chat-completion choice (`choices[0]`) asked with `logprobs` and
    `top_logprobs`."""
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
        steps.append(Step(chosen[0], tuple(pairs)))
    return steps


def from_scores(
    token_ids: Sequence[int], scores: Sequence, decode, labels: Sequence[int] | None = None
) -> list[Step] | None:
    """From transformers' `generate(output_scores=True)`: one score row per generated token
    (after the logits processors, so masked tokens are -inf); `decode` turns one id into its
    text. The alternatives of a step: the top 5, and with `labels` (`label_ids`) every label
    token the grammar leaves legal there, so no token that can start YES or NO is missed (the
    vLLM routes read exactly those)."""
    import torch

    if not scores:
        return None
    steps = []
    for chosen, row in zip(token_ids, scores):
        logprobs = torch.log_softmax(row[0].float(), dim=-1)
        _, top = torch.topk(logprobs, min(TOP_LOGPROBS, logprobs.shape[-1]))
        ids = list(dict.fromkeys([*top.tolist(), *(labels or ()), int(chosen)]))
        values = logprobs[ids].tolist()
        pairs = tuple(
            (decode(t), v) for t, v in zip(ids, values) if v != float("-inf") or t == int(chosen)
        )
        steps.append(Step(decode(int(chosen)), pairs))
    return steps


def label_ids(tokenizer) -> tuple[int, ...] | None:
    """The ids of the tokens that can decide a yes/no verdict (`confidence.label_token_ids`)
    in this tokenizer's vocabulary, each id decoded alone; None when there are none or more
    than vLLM takes, and the engine asks for the top alternatives instead.

    vLLM's own text for an alternative is this one, or with a leading space put back (a
    SentencePiece vocabulary): a leading space never starts a label, so the ids found here hold
    every id found from vLLM's text."""
    ids = range(len(tokenizer))
    texts = tokenizer.batch_decode([[i] for i in ids])
    found = label_token_ids(zip(ids, texts))
    return found if 0 < len(found) <= MAX_LABEL_TOKENS else None


__all__ = ["from_openai", "from_scores", "from_vllm", "label_ids"]
