"""Sentence splitting. Each sentence keeps the citations that trail it.

`split_sentences` (default mode) does not break on abbreviations ("Dr.", "e.g."), decimals,
ellipses, or punctuation inside quotes or brackets; it ends a sentence at CJK full stops and at
line breaks, and drops list markers and the "Answer:" line. `split_sentences_reference`
reproduces the public MURGAT reference's splitter for `--compat reference`. Both are linear in
the length of the text.
"""

from __future__ import annotations

import re
import string

from .citations import GROUP, group_body, is_citation_group
from .clean import ANSWER_MARK

ABBREVIATIONS = {
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "sr",
    "jr",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "eg",
    "ie",
    "no",
    "fig",
    "approx",
    "ca",
    "cf",
    "inc",
    "ltd",
    "co",
    "mt",
    "ft",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "u.s",
    "u.k",
    "a.m",
    "p.m",
    "al",
    "vol",
    "ch",
    "sec",
    "min",
    "max",
    "est",
    "dept",
    "gov",
    "gen",
    "col",
    "lt",
    "capt",
}
_TERMINAL = ".!?。！？"
_CJK_TERMINAL = "。！？"
_OPEN_QUOTES = {'"': '"', "“": "”", "«": "»", "「": "」", "『": "』"}
_CLOSERS = "\"'”’»」』)]*_"
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_WORD_CHARS = frozenset(string.ascii_letters + ".")
_LONGEST_ABBREVIATION = max(map(len, ABBREVIATIONS))


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the '.' at `dot` closes an abbreviation or an initial ("J. Smith").

    The word is the run of ASCII letters and dots before `dot`, from its first letter, without
    its trailing dots (what `([A-Za-z][A-Za-z.]*)$` finds in `text[:dot]`). It is read
    backwards and only as far as the answer depends on: once it is longer than any
    abbreviation, it is none. Reading (or slicing) from the start of the text at every period
    made splitting quadratic.
    """
    end = dot
    if end and text[end - 1] == "\n":
        end -= 1  # `$` also matches before a final newline
    k = end
    while k > 0 and text[k - 1] == ".":
        k -= 1
    first_letter = None
    i = k
    while i > 0 and text[i - 1] in _WORD_CHARS:
        i -= 1
        if text[i] != ".":
            first_letter = i
            if k - i > _LONGEST_ABBREVIATION:
                return False  # longer than any abbreviation, and not an initial
    if first_letter is None:
        return False
    word = text[first_letter:k].lower()
    if word in ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isalpha() and text[dot - 1].isupper()


def _skip_group(text: str, i: int) -> int:
    """Index after the bracketed group starting at `i` (or `i` when it does not close)."""
    m = GROUP.match(text, i)
    return m.end() if m else i


def _trailing_citations(text: str, i: int, known: dict[int, int]) -> int:
    """Extend a sentence end over closers and any citation groups that follow it.

    `known` maps a position already walked from (for this `text`) to where the walk ended: a
    chain of citations followed by a lowercase word is walked from each of its periods, and
    without it every period would walk the rest of the chain again.
    """
    n = len(text)
    while i < n and text[i] in _CLOSERS and text[i] not in ")]":
        i += 1
    walked = []
    while True:
        if i in known:
            end = known[i]
            break
        walked.append(i)
        j = i
        while j < n and text[j] in " \t":
            j += 1
        m = GROUP.match(text, j)
        if not m or not is_citation_group(group_body(m)):
            end = i
            break
        i = m.end()
        while i < n and text[i] in ".!?。！？":  # "(visual, 0:12)." after the period
            i += 1
    for w in walked:
        known[w] = end
    return end


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    i = 0
    n = len(line)
    quote_close: str | None = None
    # Where each closing quote last occurs: "does this quote close later?" without a search
    # to the end of the line from every opening quote.
    last_close = {c: line.rfind(c) for c in set(_OPEN_QUOTES.values())}
    known_ends: dict[int, int] = {}
    while i < n:
        ch = line[i]
        if quote_close is not None:
            if ch == quote_close:
                quote_close = None
            i += 1
            continue
        if ch in _OPEN_QUOTES:
            closing = _OPEN_QUOTES[ch]
            if last_close[closing] > i:  # an unbalanced quote is not a quote
                quote_close = closing
            i += 1
            continue
        if ch in "([（":
            j = _skip_group(line, i)
            i = j if j > i else i + 1
            continue
        if ch in _TERMINAL:
            j = i
            while j < n and line[j] in _TERMINAL:
                j += 1
            run = line[i:j]
            if ch in _CJK_TERMINAL:
                end = _trailing_citations(line, j, known_ends)
            elif run.startswith("..") or line[i:j] == "…":
                i = j
                continue
            elif (
                ch == "."
                and j == i + 1
                and (
                    _is_abbreviation(line, i)
                    or (i > 0 and line[i - 1].isdigit() and j < n and line[j].isdigit())
                )
            ):
                i = j
                continue
            else:
                end = _trailing_citations(line, j, known_ends)
                k = end
                while k < n and line[k].isspace():
                    k += 1
                if k < n and line[k].islower():
                    i = j
                    continue
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = i = end
            continue
        i += 1
    rest = line[start:].strip()
    if rest:
        out.append(rest)
    return out


def split_sentences(text: str) -> list[str]:
    """The default splitter (see module doc).

    Sentences never span a line. On each line, after its list marker, they are slices of the
    line, in order and without overlap, that hold every letter and digit of it: what lies
    between them is whitespace and fragments without a letter or digit. A blank line and an
    "Answer:" line give none.
    """
    sentences: list[str] = []
    for raw_line in (text or "").splitlines():
        if not raw_line.strip() or ANSWER_MARK.match(raw_line):
            continue
        line = _LIST_MARKER.sub("", raw_line, count=1)
        for s in _split_line(line):
            if any(c.isalnum() for c in s):
                sentences.append(s)
    return sentences


# ---------------------------------------------------------------- reference splitter

_REF_SPLITTER = re.compile(r"(?P<cit>\([^)]+\))|(?P<ellipsis>\.{2,})|(?P<punct>[.!?]+)")
_REF_STOPS = re.compile(r"(?P<ellipsis>\.{2,})|(?P<punct>[.!?]+)")
_REF_CITATION_NEXT = re.compile(r"[\s'\"*_]*\(")


def _reference_marks(text: str):
    """`_REF_SPLITTER.finditer(text)`, in linear time: after the last ')' no parenthesis can
    close, so the rest is searched for stops only (an unclosed '(' was otherwise scanned to the
    end of the text, from each one)."""
    cut = text.rfind(")") + 1
    yield from _REF_SPLITTER.finditer(text, 0, cut)
    yield from _REF_STOPS.finditer(text, cut)


def split_sentences_reference(text: str) -> list[str]:
    """The reference's splitter: breaks at every run of . ! ? not followed by a parenthesis.

    Its sentences are slices of the text, in order and without overlap, that hold every
    character but whitespace.
    """
    if not text:
        return []
    sentences: list[str] = []
    current = 0
    pending = False
    for m in _reference_marks(text):
        if m.lastgroup == "ellipsis":
            pending = False
        elif m.lastgroup == "punct":
            if _REF_CITATION_NEXT.match(text, m.end()):
                pending = True
            else:
                sentences.append(text[current : m.end()].strip())
                current = m.end()
                pending = False
        elif pending:  # a citation
            sentences.append(text[current : m.end()].strip())
            current = m.end()
            pending = False
    if current < len(text):
        rest = text[current:].strip()
        if rest:
            sentences.append(rest)
    return sentences
