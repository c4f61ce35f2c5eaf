"""A cut thought on `vllm serve` (`engines.thought` for the in-process engine): closed, and the
verdict decoded under the grammar in a second request on the same prefix.

The first answer carries the prompt's token ids and the thought's (`return_token_ids`). The
second is a `/v1/completions` request whose prompt is those ids, the thought's and the closing
tag's: the server's engine reads the tag in the prompt as the end of reasoning, so the grammar
applies from the first new token, as in-process. Media cannot ride a completions request: a
request with media is continued through `/v1/chat/completions` instead, its thought as the
final assistant message (`continue_final_message`), re-tokenized by the server. The joined
answer is shaped as a chat answer, with `thought_cut` set.
"""

from __future__ import annotations

from collections.abc import Sequence

from .confidence import TOP_LOGPROBS, wants_p_yes
from .thought import CLOSE


def was_cut(answer, thinking: bool) -> bool:
    """A chat answer whose thought ran to the token budget without closing. With a reasoning
    parser the server splits the thought off (`reasoning_content`) and leaves `content` empty
    while it is open; without one the tag would be in `content`."""
    if not thinking or not isinstance(answer, dict):
        return False
    try:
        choice = answer["choices"][0]
    except (KeyError, IndexError, TypeError):
        return False
    if choice.get("finish_reason") != "length":
        return False
    message = choice.get("message") or {}
    content = message.get("content") or ""
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning is not None:
        return not content.strip()
    return "</think>" not in content


def second_body(request, first_body: dict, answer: dict, close_ids: list[int]) -> tuple:
    """(path, body) of the verdict's request after the cut thought in `answer`."""
    choice = answer["choices"][0]
    common = {
        k: first_body[k]
        for k in ("model", "temperature", "top_p", "top_k", "seed", "structured_outputs")
        if k in first_body
    }
    common.update(n=1, max_tokens=request.max_tokens(), return_token_ids=True)
    ids, thought = answer.get("prompt_token_ids"), choice.get("token_ids")
    if not request.media and ids is not None and thought is not None:
        body = {**common, "prompt": [*ids, *thought, *close_ids]}
        if wants_p_yes(request.verdict) and first_body.get("logprobs"):
            # As many top alternatives as the first request asked (counted from the grammar),
            # or the label tokens where it asked for them: a server batch where some requests
            # ask for token ids gives the others the gathered columns too.
            body["logprobs"] = first_body.get("top_logprobs") or TOP_LOGPROBS
            if "logprob_token_ids" in first_body:
                body["logprob_token_ids"] = first_body["logprob_token_ids"]
        return "/completions", body
    message = choice.get("message") or {}
    text = message.get("reasoning_content") or message.get("reasoning") or ""
    text = text or (message.get("content") or "")
    if not text.lstrip().startswith("<think>"):
        text = "<think>\n" + text
    messages = [*first_body["messages"], {"role": "assistant", "content": text + CLOSE}]
    body = {**common, "messages": messages}
    body.update(add_generation_prompt=False, continue_final_message=True)
    for k in (
        "media_io_kwargs",
        "mm_processor_kwargs",
        "logprobs",
        "top_logprobs",
        "logprob_token_ids",
    ):
        if k in first_body:
            body[k] = first_body[k]
    return "/chat/completions", body


def _chat_logprobs(completion_logprobs: dict | None) -> dict | None:
    """A completions answer's log-probabilities in the chat shape (`logprobs.content`)."""
    if not completion_logprobs:
        return None
    content = []
    tops = completion_logprobs.get("top_logprobs") or []
    for i, (token, lp) in enumerate(
        zip(
            completion_logprobs.get("tokens") or [], completion_logprobs.get("token_logprobs") or []
        )
    ):
        alternatives = tops[i] if i < len(tops) and tops[i] else {}
        content.append(
            {
                "token": token,
                "logprob": lp,
                "top_logprobs": [{"token": t, "logprob": v} for t, v in alternatives.items()],
            }
        )
    return {"content": content}


def joined(first: dict, second: dict, path: str) -> dict:
    """The chat-shaped answer of a cut thought (from `first`) and its verdict (`second`)."""
    c1, c2 = first["choices"][0], second["choices"][0]
    m1 = c1.get("message") or {}
    thought = m1.get("reasoning_content") or m1.get("reasoning") or m1.get("content") or ""
    if path == "/completions":
        verdict, logprobs = c2.get("text") or "", _chat_logprobs(c2.get("logprobs"))
    else:
        m2 = c2.get("message") or {}
        verdict, logprobs = m2.get("content") or "", c2.get("logprobs")
    u1, u2 = first.get("usage") or {}, second.get("usage") or {}
    return {
        "choices": [
            {
                "message": {"content": verdict, "reasoning_content": thought},
                "logprobs": logprobs,
                "finish_reason": c2.get("finish_reason"),
            }
        ],
        "usage": {
            "prompt_tokens": u1.get("prompt_tokens") or 0,
            "completion_tokens": (u2.get("prompt_tokens") or 0)
            - (u1.get("prompt_tokens") or 0)
            + (u2.get("completion_tokens") or 0),
        },
        "prompt_token_ids": first.get("prompt_token_ids"),
        "thought_cut": True,
    }


def close_cut_thoughts(engine, requests: Sequence, bodies: list, answers: list) -> list:
    """`answers` with each cut thought closed and its verdict decoded in a second request;
    `requests` and `bodies` are the ones sent, aligned with `answers`. A second request that
    fails leaves the cut answer as it was (unparsed, with its raw text)."""
    thinking = engine.preset.quirks.thinking
    todo = [
        j
        for j, a in enumerate(answers)
        if requests[j].constraint() is not None and was_cut(a, thinking)
    ]
    if not todo:
        return answers
    close = engine.close_ids()
    sent = [second_body(requests[j], bodies[j], answers[j], close) for j in todo]
    seconds = engine.send_all([b for _, b in sent], paths=[p for p, _ in sent])
    out = list(answers)
    for j, (path, _), second in zip(todo, sent, seconds):
        if isinstance(second, dict):
            out[j] = joined(answers[j], second, path)
    return out


__all__ = ["close_cut_thoughts", "joined", "second_body", "was_cut"]
