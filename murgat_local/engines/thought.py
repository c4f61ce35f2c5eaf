"""A thinking judge whose thought reaches its budget still gives a verdict.

A thinking preset (`quirks.thinking`) decodes its thought unconstrained, then the verdict under
the grammar once the thought is closed. A thought that runs to the token budget never closes,
so the verdict's grammar never applies and the generation cannot parse. Here such a thought is
closed (`</think>` appended to the tokens it wrote) and the verdict is decoded in a second
call on that same prefix, under the grammar, with the verdict's own token budget. vLLM reads
the closing tag in the prompt as the end of reasoning, so its grammar applies from the first
new token. The result says `thought_cut`; the stage counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CLOSE = "\n</think>\n\n"


@dataclass
class _Completion:
    """The joined generation, shaped as vLLM's `CompletionOutput` for the engine's reader:
    the text of both calls, the verdict call's tokens and log-probabilities (where p_yes is
    read), and the tokens of both for the count."""

    text: str
    token_ids: list[int]
    logprobs: list | None
    total_tokens: int


@dataclass
class _Output:
    prompt_token_ids: list[int] | None
    outputs: list[_Completion]
    thought_cut: bool = True


def was_cut(completion, thinking: bool) -> bool:
    """A thinking model's generation that ended at its token budget inside an open thought."""
    if not thinking or getattr(completion, "finish_reason", None) != "length":
        return False
    return "</think>" not in (completion.text or "")


def close_cut_thoughts(
    engine, requests: Sequence, prompts: list, params: list, outputs: list
) -> list:
    """`outputs` with each cut thought closed and its verdict decoded in a second call.
    `requests`, `prompts` and `params` are the ones sent, aligned with `outputs`."""
    from vllm import SamplingParams

    thinking = engine.preset.quirks.thinking
    todo = [
        j
        for j, out in enumerate(outputs)
        if not isinstance(out, Exception)
        and requests[j].constraint() is not None
        and was_cut(out.outputs[0], thinking)
    ]
    if not todo:
        return outputs
    close = engine.renderer.tokenizer.encode(CLOSE, add_special_tokens=False)
    again, again_params = [], []
    for j in todo:
        first = outputs[j].outputs[0]
        prompt = dict(prompts[j])
        prompt["prompt_token_ids"] = list(prompts[j]["prompt_token_ids"]) + [
            *first.token_ids,
            *close,
        ]
        again.append(prompt)
        p: SamplingParams = params[j].clone()
        p.max_tokens = requests[j].max_tokens()  # the verdict's budget; the thought is spent
        again_params.append(p)
    seconds = engine._generate(again, again_params)
    out = list(outputs)
    for j, second in zip(todo, seconds):
        if isinstance(second, Exception):
            continue  # the cut generation stands, unparsed, with its raw text
        first, verdict = outputs[j].outputs[0], second.outputs[0]
        out[j] = _Output(
            outputs[j].prompt_token_ids,
            [
                _Completion(
                    first.text + CLOSE + verdict.text,
                    list(verdict.token_ids),
                    verdict.logprobs,
                    len(first.token_ids) + len(close) + len(verdict.token_ids),
                )
            ],
        )
    return out


__all__ = ["CLOSE", "close_cut_thoughts", "was_cut"]
