"""Cleaning a model generation: thinking removed, the reasoning and the answer letter taken out.

Default mode and the reference's behaviour (`--compat reference`) differ only where the
reference loses information; both are here so the difference is visible in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_REASONING_START = re.compile(r"(?:^|\n|\*)\s*Reasoning\s*[:*]*\s*", re.IGNORECASE)
_ANSWER_START = re.compile(
    r"(?:\n|^|(?<=[.!?。]))\s*[*_#]*\s*(?:final\s+)?Answer\s*[*_]*\s*[:：]", re.IGNORECASE
)
_LETTER = re.compile(r"^[\s*_(\[{\"'`]*([A-Z])(?![A-Za-z])")


@dataclass(frozen=True)
class Cleaned:
    reasoning: str
    answer_text: str
    answer_letter: str | None


def remove_thinking(text: str) -> str:
    """Drop `<think>...</think>` blocks; with only a closing tag, keep what follows it."""
    if not text:
        return ""
    text = _THINK_BLOCK.sub("", text)
    if re.search(r"</think>", text, re.IGNORECASE):
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    return text.strip()


def extract_reasoning(text: str) -> str:
    """The text between a "Reasoning:" marker and the "Answer:" line; the whole text without them."""
    start = _REASONING_START.search(text)
    body = text[start.end():] if start else text
    end = _ANSWER_START.search(body)
    if end:
        body = body[: end.start()]
    return body.strip()


def extract_answer_text(text: str) -> str:
    """The text the default mode reads the answer letter from (see `text.answers`)."""
    from .answers import extract_answer  # answers builds on remove_thinking, so it imports this module

    return extract_answer(text).raw


def answer_letter(answer_text: str) -> str | None:
    """The reference's letter rule: a capital letter at the start of the answer text."""
    m = _LETTER.match(answer_text or "")
    return m.group(1) if m else None


def clean_generation(text: str) -> Cleaned:
    """Default mode: the answer letter comes from `text.answers.extract_answer`."""
    from .answers import extract_answer

    body = remove_thinking(text)
    found = extract_answer(body)
    return Cleaned(extract_reasoning(body), found.raw, found.letter)


# ---------------------------------------------------------------- reference behaviour


def _reference_reasoning(text: str) -> str:
    if not text:
        return ""
    start = re.search(r"(?:^|\n|\*)\s*Reasoning\s*[:*]*\s*", text, re.IGNORECASE)
    if start is None:
        return text
    content = text[start.end():]
    end = re.search(r"(?:\n|^)\s*Answer\s*[:\s]", content, re.IGNORECASE)
    if end is None:
        return text  # the reference keeps the whole text, "Reasoning:" marker included
    return content[: end.start()].strip()


def _reference_answer(text: str) -> str:
    boxed = re.findall(r"\\boxed\s*\{(.*?)\}", text)
    if boxed:
        return boxed[-1].strip()
    m = re.search(r"Answer:\s*(.*?)(?:\n|$)", text, re.DOTALL | re.IGNORECASE)
    if m:
        return m.group(1).strip()
    if "Answer:" in text or "answer:" in text:
        parts = re.split(r"Answer:\s*", text, flags=re.IGNORECASE)
        if len(parts) > 1:
            return parts[-1].strip()
    return ""


def clean_generation_reference(text: str) -> Cleaned:
    body = _THINK_BLOCK.sub("", text or "").strip()
    answer = _reference_answer(body)
    return Cleaned(_reference_reasoning(body), answer, answer_letter(answer))
