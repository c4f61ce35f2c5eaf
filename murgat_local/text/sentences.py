"""Sentence splitting. Each sentence keeps the citations that trail it.

`split_sentences` (default mode) does not break on abbreviations ("Dr.", "e.g."), decimals,
ellipses, or punctuation inside quotes or brackets; it ends a sentence at CJK full stops and at
line breaks, and drops list markers and the "Answer:" line. `split_sentences_reference`
reproduces the public MURGAT reference's splitter for `--compat reference`.
"""

from __future__ import annotations

import re

from .citations import GROUP, group_body, is_citation_group

ABBREVIATIONS = {
    "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "eg", "ie",
    "no", "fig", "approx", "ca", "cf", "inc", "ltd", "co", "mt", "ft", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "a.m", "p.m",
    "al", "vol", "ch", "sec", "min", "max", "est", "dept", "gov", "gen", "col", "lt", "capt",
}
_TERMINAL = ".!?。！？"
_CJK_TERMINAL = "。！？"
_OPEN_QUOTES = {'"': '"', "“": "”", "«": "»", "「": "」", "『": "』"}
_CLOSERS = "\"'”’»」』)]*_"
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_ANSWER_LINE = re.compile(r"^\s*[*_#]*\s*(?:final\s+)?answer\s*[*_]*\s*[:：]", re.IGNORECASE)


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the '.' at `dot` closes an abbreviation or an initial ("J. Smith")."""
    m = re.search(r"([A-Za-z][A-Za-z.]*)$", text[:dot])
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    if word in ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isalpha() and text[dot - 1].isupper()


def _skip_group(text: str, i: int) -> int:
    """Index after the bracketed group starting at `i` (or `i` when it does not close)."""
    m = GROUP.match(text, i)
    return m.end() if m else i


def _trailing_citations(text: str, i: int) -> int:
    """Extend a sentence end over closers and any citation groups that follow it."""
    n = len(text)
    while i < n and text[i] in _CLOSERS and text[i] not in ")]":
        i += 1
    while True:
        j = i
        while j < n and text[j] in " \t":
            j += 1
        m = GROUP.match(text, j)
        if not m:
            return i
        body = group_body(m)
        if not is_citation_group(body):
            return i
        i = m.end()
        while i < n and text[i] in ".!?。！？":  # "(visual, 0:12)." after the period
            i += 1


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    i = 0
    n = len(line)
    quote_close: str | None = None
    while i < n:
        ch = line[i]
        if quote_close is not None:
            if ch == quote_close:
                quote_close = None
            i += 1
            continue
        if ch in _OPEN_QUOTES:
            closing = _OPEN_QUOTES[ch]
            if line.find(closing, i + 1) != -1:  # an unbalanced quote is not a quote
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
                end = _trailing_citations(line, j)
            elif run.startswith("..") or line[i:j] == "…":
                i = j
                continue
            elif ch == "." and j == i + 1 and (
                _is_abbreviation(line, i) or (i > 0 and line[i - 1].isdigit() and j < n and line[j].isdigit())
            ):
                i = j
                continue
            else:
                end = _trailing_citations(line, j)
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
    """The default splitter (see module doc)."""
    sentences: list[str] = []
    for raw_line in (text or "").splitlines():
        if not raw_line.strip() or _ANSWER_LINE.match(raw_line):
            continue
        line = _LIST_MARKER.sub("", raw_line, count=1)
        for s in _split_line(line):
            if any(c.isalnum() for c in s):
                sentences.append(s)
    return sentences


# ---------------------------------------------------------------- reference splitter

_REF_SPLITTER = re.compile(r"(?P<cit>\([^)]+\))|(?P<ellipsis>\.{2,})|(?P<punct>[.!?]+)")


def split_sentences_reference(text: str) -> list[str]:
    """The reference's splitter: breaks at every run of . ! ? not followed by a parenthesis."""
    if not text:
        return []
    sentences: list[str] = []
    current = 0
    pending = False
    for m in _REF_SPLITTER.finditer(text):
        if m.group("ellipsis"):
            pending = False
        elif m.group("punct"):
            if re.match(r"^[\s'\"*_]*\(", text[m.end():]):
                pending = True
            else:
                sentences.append(text[current:m.end()].strip())
                current = m.end()
                pending = False
        elif m.group("cit") and pending:
            sentences.append(text[current:m.end()].strip())
            current = m.end()
            pending = False
    if current < len(text):
        rest = text[current:].strip()
        if rest:
            sentences.append(rest)
    return sentences
