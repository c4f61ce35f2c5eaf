"""Which option letter a multiple-choice response chose, read by fixed rules.

Two places are read, in order, after any thinking is removed:

1. the last `\\boxed{...}` (braces may nest: `\\boxed{\\text{B}}`);
2. the last "Answer:" marker. Accepted: any case, markdown around it (`**Answer:** B`), a
   "Final"/"Correct" before it, a full-width colon (`Answer：B`), and the value on the next line
   when the marker's line holds nothing else. A dash instead of the colon (`ANSWER - C`) counts
   only at the start of a line: in running prose "answer - ..." is an aside, not an answer.

What a place says becomes a letter when it is a letter standing alone ("B", "(b)", "B.",
"B) a cat", "B: a cat", "\\text{B}", "The answer is D.", "Option C"), or, when `options` are
given, when it is exactly one option's text (ignoring case, punctuation and the option's own
"A." prefix). A lower-case letter needs a delimiter or nothing after it, and "A"/"I" followed by
a lower-case word are English ("A man waves", "I think"), not choices.

A place that names a letter decides, even when that letter is past the last option (the answer
is then None: the model picked something that is not offered). A place that names no letter
("\\boxed{}", "Answer: it depends") lets the next place speak. With no letter anywhere, `letter`
and `path` are None and the caller asks a judge.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..inputs.datasets import match_option
from .thinking import remove_thinking

AnswerPath = Literal["boxed", "answer_line"]


@dataclass(frozen=True)
class AnswerExtraction:
    letter: str | None
    path: AnswerPath | None  # where the letter was read; None when there is no letter
    raw: str  # the text the letter was read from ("" when no place was found)


_BOXED = re.compile(r"\\boxed\s*\{")
_BRACE = re.compile(r"[{}]")
# "answer" not inside a word ("reanswer"), then markdown, then the colon. `(?=(X))\1` is an
# atomic X (never given back, so a long run of spaces without a colon is not retried split by
# split); nothing X could give back would let the colon or the dash match.
_COLON_MARKER = re.compile(r"(?<![A-Za-z])answer(?=(\s*[*_]*\s*))\1[:：]", re.IGNORECASE)
_DASH_MARKER = re.compile(  # a spaced dash, so that "Answer-based" is no marker
    r"^[ \t>#*_\-]*(?:final\s+|correct\s+)?answer(?=([ \t]*[*_]*[ \t]*))\1"
    r"(?:(?<=[ \t])[-–—]|[-–—](?=[ \t]))[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_LATEX_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|emph)\s*\{([^{}]*)\}")
_LATEX_COMMANDS = ("\\text", "\\textbf", "\\textit", "\\mathrm", "\\mathbf", "\\mbox", "\\emph")
_LONGEST_COMMAND = max(map(len, _LATEX_COMMANDS))
_LEAD_IN = re.compile(
    r"^(?:(?:so|thus|therefore|hence)[,\s]+)?(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?"
    r"(?:answer|option|choice)\b(?:\s+is\b|\s*[:：])?\s*|^(?:it\s+is|it's|is)\s+",
    re.IGNORECASE,
)
_OPEN = "([{<\"'“‘（【"
_CLOSE = ")]}>\"'”’）】"
_DELIMITERS = ".:：,;-–—"
_LEADING_LETTER = re.compile(r"[\s" + re.escape(_OPEN) + r"]*([A-Za-z])(.*)", re.DOTALL)


def extract_answer(text: str, options: Sequence[str] | None = None) -> AnswerExtraction:
    """The option letter a response chose, and where it was read.

    Args:
        text: the whole response; `<think>` blocks are ignored, and so is everything after a
            `<think>` that is never closed.
        options: the option texts in letter order. With them, a stated option text maps to its
            letter and a letter past the last option gives None.
    """
    places = stated_answers(text)
    for path, raw in places:
        named, letter = _read_letter(raw, options)
        if named:
            return AnswerExtraction(letter, path if letter else None, raw)
    return AnswerExtraction(None, None, places[0][1] if places else "")


def stated_answers(text: str) -> list[tuple[AnswerPath, str]]:
    """Where a response states its answer, in the order they are read: the last `\\boxed{}`,
    then the last `Answer:` line (thinking ignored, and all after an unclosed `<think>`)."""
    body = _visible(text or "")
    places: list[tuple[AnswerPath, str]] = []
    boxed = _last_boxed(body)
    if boxed is not None:
        places.append(("boxed", boxed))
    line = _last_answer_line(body)
    if line is not None:
        places.append(("answer_line", line))
    return places


def _visible(text: str) -> str:
    body = remove_thinking(text)
    unclosed = re.search(r"<think>", body, re.IGNORECASE)
    return body[: unclosed.start()] if unclosed else body


def _last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{` whose brace closes (braces nest).

    Every brace is paired in one pass, so an unclosed `\\boxed{` costs nothing more; walking
    to the end of the text from each one was quadratic.
    """
    openers = [m.end() for m in _BOXED.finditer(text)]
    if not openers:
        return None
    closing: dict[int, int] = {}  # the position after a '{' -> the position of its '}'
    pending: list[int] = []
    for m in _BRACE.finditer(text, openers[0] - 1):
        if m.group() == "{":
            pending.append(m.end())
        elif pending:
            closing[pending.pop()] = m.start()
    for start in reversed(openers):
        if start in closing:
            return text[start : closing[start]].strip()
    return None


def _last_answer_line(text: str) -> str | None:
    ends = [m.end() for m in _COLON_MARKER.finditer(text)] + [
        m.end() for m in _DASH_MARKER.finditer(text)
    ]
    if not ends:
        return None
    rest = text[max(ends) :]
    first, _, after = rest.partition("\n")
    if not strip_markup(first):
        # "**Answer:**" alone on its line: the value is the next line with something on it.
        first = next((ln for ln in after.split("\n") if strip_markup(ln)), "")
    return first.strip().strip("*_ \t")


def strip_markup(s: str) -> str:
    """`s` without `$`, backquotes, emphasis marks and LaTeX wrappers (`\\text{B}` is B)."""
    s = _unwrap_latex(s.replace("$", "").replace("`", ""))
    s = re.sub(r"[*_]{1,3}", " ", s)
    return s.strip()


def _unwrap_latex(s: str) -> str:
    """`_LATEX_WRAPPER` replaced by its content until nothing changes (`\\text{\\textbf{B}}`
    is B), in one pass: a pass per level of nesting was quadratic.

    Braces are paired left to right. At a '}' whose pair holds no surviving brace, the
    surviving text before its '{' is checked for a command and spaces; when there is one, they
    and both braces are dropped. The surviving characters are a linked list, so a drop moves
    nothing, and a command that forms only once an inner wrapper is gone
    ("\\te\\text{x}t{B}") is found, as repeated substitution finds it.
    """
    if "\\" not in s or "{" not in s or "}" not in s:
        return s
    n = len(s)
    before = [-1] * n  # the surviving character before i (-1: none)
    after = [n] * n  # the surviving character after i (n: none)
    last = -1  # the last surviving character so far
    pending: list[list] = []  # per unclosed '{': [its position, whether a brace survives in it]
    for i, ch in enumerate(s):
        if ch == "}" and pending:
            brace, braced = pending.pop()
            command = None if braced else _command_before(s, before, brace)
            if command is not None:  # drop the command, its spaces, the '{' and this '}'
                keep = before[command]
                first = after[brace] if brace != last else n  # the content's first character
                if first < n:
                    before[first] = keep
                else:
                    last = keep
                if keep >= 0:
                    after[keep] = first
                continue
            if pending:
                pending[-1][1] = True  # this pair survives inside its parent
        elif ch == "{":
            pending.append([i, False])
        before[i] = last
        if last >= 0:
            after[last] = i
        last = i
    out = []
    while last >= 0:
        out.append(s[last])
        last = before[last]
    return "".join(reversed(out))


def _command_before(s: str, before: list[int], brace: int) -> int | None:
    """The position of the backslash when the surviving text before `brace` ends with one of
    `_LATEX_COMMANDS` and spaces; None otherwise."""
    i = before[brace]
    while i >= 0 and s[i].isspace():
        i = before[i]
    tail: list = []
    while i >= 0 and len(tail) < _LONGEST_COMMAND:
        tail.append(i)
        i = before[i]
    word = "".join(s[k] for k in reversed(tail))
    for command in _LATEX_COMMANDS:
        if word.endswith(command):
            return tail[len(command) - 1]
    return None


def _read_letter(raw: str, options: Sequence[str] | None) -> tuple[bool, str | None]:
    """(whether `raw` names a choice, the letter when it is an offered one)."""
    said = [strip_markup(raw)]
    for _ in range(3):  # "So the answer is option B"
        shorter = _LEAD_IN.sub("", said[-1], count=1).strip()
        if shorter == said[-1]:
            break
        said.append(shorter)
    for s in said:  # the text as written first: an option may itself start "is ..."
        matched = match_option(s, options)
        if matched:
            return True, matched
    letter = _leading_letter(said[-1])
    if letter is None:
        return False, None
    if options and string.ascii_uppercase.index(letter) >= len(options):
        return True, None
    return True, letter


def _leading_letter(s: str) -> str | None:
    m = _LEADING_LETTER.match(s)
    if not m:
        return None
    ch, rest = m.group(1), m.group(2)
    tail = rest.lstrip()
    if not tail or tail[0] in _CLOSE or rest[0] in _DELIMITERS:
        return ch.upper()
    # "B the man" is a choice; "A man" and "I think" are English.
    if rest[0].isspace() and ch.isupper() and not (ch in "AI" and tail[0].islower()):
        return ch
    return None
