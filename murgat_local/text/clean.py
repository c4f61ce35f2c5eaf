"""Cleaning a model generation: thinking removed, the reasoning and the answer letter taken out.

Default mode and the reference's behaviour (`--compat reference`) differ only where the
reference loses information; both are here so the difference is visible in one place.

Every step is linear in the length of the text. Where a plain regex search would rescan a run
of spaces, or the rest of the text, from each of many starting points (a long run of blank
lines, many unclosed `<think>` or `\\boxed{`), the search is driven from Python so that each
character is looked at a bounded number of times; each such function names the pattern whose
result it returns, and returns exactly that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .answers import extract_answer
from .thinking import drop_think_blocks, remove_thinking

_REASONING_WORD = re.compile(r"Reasoning", re.IGNORECASE)
_REASONING_TAIL = re.compile(r"\s*[:*]*\s*")
# An "Answer:" marker starting exactly where it is matched: spaces and markdown, "final",
# "Answer", markdown, a colon. `(?=(X))\1` is an atomic X: what X matched is never given back.
# It matches what the plain `\s*[*_#]*\s*(?:final\s+)?Answer\s*[*_]*\s*[:：]` matches (the
# character after each run can never be one the run took), without trying every split of a long
# run of spaces when no colon follows.
ANSWER_MARK = re.compile(
    r"(?=(\s*[*_#]*\s*))\1(?:final\s+)?Answer(?=(\s*[*_]*\s*))\2[:：]", re.IGNORECASE
)
_MARK_LEAD = re.compile(r"\s*[*_#]*")
_LINE_OR_AFTER_STOP = re.compile(r"\n|(?<=[.!?。])")
_SPACES = re.compile(r"\s*")
_REFERENCE_ANSWER_AT = re.compile(r"\s*Answer\s*[:\s]", re.IGNORECASE)
_REFERENCE_BOXED_OPEN = re.compile(r"\\boxed\s*\{")
_LETTER = re.compile(r"^[\s*_(\[{\"'`]*([A-Z])(?![A-Za-z])")


def _match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where `pattern`, which matches the empty string too, ends from `pos`."""
    m = pattern.match(text, pos)
    assert m is not None, "the pattern matches the empty string"
    return m.end()


@dataclass(frozen=True)
class Cleaned:
    reasoning: str
    answer_text: str
    answer_letter: str | None


def _reasoning_marker_end(text: str) -> int | None:
    r"""Where the first match of `(?:^|\n|\*)\s*Reasoning\s*[:*]*\s*` (any case) ends.

    Each occurrence of the word is checked by walking back over the spaces before it to a
    newline, a '*' or the start; a regex search rescans those spaces from every newline in them.
    """
    for word in _REASONING_WORD.finditer(text):
        i = word.start()
        while i > 0 and text[i - 1] != "\n" and text[i - 1].isspace():
            i -= 1
        if i == 0 or text[i - 1] in "\n*":
            return _match_end(_REASONING_TAIL, text, word.end())
    return None


def _answer_marker_start(text: str) -> int | None:
    r"""Where the first match of `(?:\n|^|(?<=[.!?。]))` followed by `ANSWER_MARK` starts.

    A start that fails rules out every later start inside the same leading spaces and markdown
    (they reach the same word), so those are skipped instead of rescanned.
    """
    pos = 0
    while pos <= len(text):
        if pos == 0:
            start = 0
        else:
            m = _LINE_OR_AFTER_STOP.search(text, pos)
            if m is None:
                return None
            start = m.start()
        if ANSWER_MARK.match(text, start):
            return start
        pos = max(_match_end(_MARK_LEAD, text, start), start + 1)
    return None


def extract_reasoning(text: str) -> str:
    """The text between a "Reasoning:" marker and the "Answer:" line; the whole text without them."""
    start = _reasoning_marker_end(text)
    body = text[start:] if start is not None else text
    end = _answer_marker_start(body)
    if end is not None:
        body = body[:end]
    return body.strip()


def extract_answer_text(text: str) -> str:
    """The text the default mode reads the answer letter from (see `text.answers`)."""
    return extract_answer(text).raw


def answer_letter(answer_text: str) -> str | None:
    """The reference's letter rule: a capital letter at the start of the answer text."""
    m = _LETTER.match(answer_text or "")
    return m.group(1) if m else None


def clean_generation(text: str) -> Cleaned:
    """Default mode: the answer letter comes from `text.answers.extract_answer`."""
    body = remove_thinking(text)
    found = extract_answer(body)
    return Cleaned(extract_reasoning(body), found.raw, found.letter)


# ---------------------------------------------------------------- reference behaviour


def _reference_answer_start(text: str) -> int | None:
    r"""Where the first match of `(?:\n|^)\s*Answer\s*[:\s]` (any case) starts; the newlines
    inside a run of spaces that failed are skipped, not rescanned."""
    pos = 0
    while pos <= len(text):
        start = 0 if pos == 0 else text.find("\n", pos)
        if start < 0:
            return None
        if _REFERENCE_ANSWER_AT.match(text, start):
            return start
        pos = max(_match_end(_SPACES, text, start), start + 1)
    return None


def _reference_last_boxed(text: str) -> str | None:
    r"""What `re.findall(r"\\boxed\s*\{(.*?)\}", text)[-1]` returns (None when nothing matches).

    The next '}' and the next line break are looked up once and reused by every opener before
    them, instead of being searched for from each unclosed opener.
    """
    none = len(text) + 1
    found = None
    resume = 0
    close = newline = -1  # the first '}' / '\n' at or after the last lookup (`none`: there is none)
    for m in _REFERENCE_BOXED_OPEN.finditer(text):
        if m.start() < resume:
            continue  # inside the previous match
        body = m.end()
        if close < body:
            close = text.find("}", body)
            close = none if close < 0 else close
        if newline < body:
            newline = text.find("\n", body)
            newline = none if newline < 0 else newline
        if close < newline:
            found, resume = text[body:close], close + 1
    return found


def _reference_reasoning(text: str) -> str:
    if not text:
        return ""
    start = _reasoning_marker_end(text)
    if start is None:
        return text
    content = text[start:]
    end = _reference_answer_start(content)
    if end is None:
        return text  # the reference keeps the whole text, "Reasoning:" marker included
    return content[:end].strip()


def _reference_answer(text: str) -> str:
    boxed = _reference_last_boxed(text)
    if boxed is not None:
        return boxed.strip()
    m = re.search(r"Answer:\s*(.*?)(?:\n|$)", text, re.DOTALL | re.IGNORECASE)
    if m:
        return m.group(1).strip()
    if "Answer:" in text or "answer:" in text:
        parts = re.split(r"Answer:\s*", text, flags=re.IGNORECASE)
        if len(parts) > 1:
            return parts[-1].strip()
    return ""


def clean_generation_reference(text: str) -> Cleaned:
    body = drop_think_blocks(text or "").strip()
    answer = _reference_answer(body)
    return Cleaned(_reference_reasoning(body), answer, answer_letter(answer))
