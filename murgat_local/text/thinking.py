"""A thinking model's `<think>...</think>` blocks, removed before anything reads a response.

Its own module because cleaning (`text.clean`), answer extraction (`text.answers`), the engines
and the responders all need it, and none of them needs the others for it.

Linear in the length of the text, as every text step is (see `text.clean`).
"""

from __future__ import annotations

import re

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def drop_think_blocks(text: str) -> str:
    """`<think>.*?</think>` (any case) removed. An opening tag after the last closing tag can
    match nothing, so only the text up to that closing tag is searched: otherwise each such
    tag rescans the rest of the text."""
    last = None
    for match in _THINK_CLOSE.finditer(text):
        last = match
    if last is None:
        return text
    return _THINK_BLOCK.sub("", text[: last.end()]) + text[last.end() :]


def remove_thinking(text: str) -> str:
    """Drop `<think>...</think>` blocks; with only a closing tag, keep what follows it."""
    if not text:
        return ""
    text = drop_think_blocks(text)
    if _THINK_CLOSE.search(text):
        text = _THINK_CLOSE.split(text)[-1]
    return text.strip()
