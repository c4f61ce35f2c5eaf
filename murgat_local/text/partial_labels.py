"""Reading partial labels: people's answers to the verdicts a run abstained on.

`murgat annotate RUN --abstained` exports one line per response, of its own shape:

    {"id": "h01", "annotator": "a1", "abstained": [
       {"question": "s2.f1.c1.precise", "kind": "precise",
        "sentence": "A red square fills the frame (visual, 0:01) (visual, 0:03).",
        "fact": "A red square fills the frame.", "citation": "(visual, 0:01)", "answer": true}]}

Each row answers one question about one sentence (1-based `s{i}`), one of the run's facts
(`f{j}`) and one of the sentence's citations (`c{k}`): `verifiable`, `entailed` (the citations
together support the fact) or `precise` (the citation is needed). A row carries the texts it was
asked about, so an answer is matched by them, never by its indices alone: `citation` must be the
sentence's k-th citation, and the sentence the response's i-th (`murgat segment`'s text,
whitespace-normalized; checked by the judge, which holds the response). An `answer` that is
`"unsure"` or null is no answer. A row that does not hold together makes the whole line unusable
(a `LabelError` naming the row), as a bad line of full labels does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .citations import Citation, parse_citations, strip_citations

_SUFFIX = re.compile(r"s(\d+)(?:\.f(\d+)(?:\.c(\d+))?)?\.(verifiable|entailed|precise)")
_SHAPE = {"verifiable": (False, False), "entailed": (True, False), "precise": (True, True)}
UNSURE = "unsure"


@dataclass(frozen=True)
class PartialFact:
    index: int  # 0-based, the run's numbering
    text: str
    entailed: bool | None  # None: not asked, or no answer
    precise: tuple[tuple[int, bool], ...] = ()  # (citation, needed), answered ones only


@dataclass(frozen=True)
class PartialSentence:
    index: int  # 0-based
    text: str  # as `murgat segment` prints it, citations included
    citations: tuple[Citation, ...]
    verifiable: bool | None = None
    facts: tuple[PartialFact, ...] = ()

    @property
    def claim(self) -> str:
        return strip_citations(self.text) or self.text


@dataclass(frozen=True)
class PartialResponse:
    id: str
    sentences: tuple[PartialSentence, ...]  # those asked about, by index
    annotator: str | None = None
    source: str = ""


class PartialError(ValueError):
    pass


def _norm(text: str) -> str:
    return " ".join(text.split())


def _answer(row: dict, where: str) -> bool | None:
    value = row.get("answer")
    if value is None or value == UNSURE:
        return None
    if not isinstance(value, bool):
        raise PartialError(f"{where}'answer' must be true, false, {UNSURE!r} or null")
    return value


def _row(row: object, n: int) -> tuple[str, tuple[int, int | None, int | None], str, dict]:
    where = f"abstained row {n}: "
    if not isinstance(row, dict):
        raise PartialError(f"{where}expected an object")
    q = row.get("question")
    m = _SUFFIX.fullmatch(q) if isinstance(q, str) else None
    if not isinstance(q, str) or m is None:
        raise PartialError(f"{where}'question' {q!r} is not s{{i}}[.f{{j}}[.c{{k}}]].KIND")
    kind = m.group(4)
    fact, citation = _SHAPE[kind]
    if (m.group(2) is not None) != fact or (m.group(3) is not None) != citation:
        raise PartialError(f"{where}{q!r} is not how a {kind} question is numbered")
    if row.get("kind", kind) != kind:
        raise PartialError(f"{where}'kind' {row.get('kind')!r} does not match question {q!r}")
    for name, needed in (("sentence", True), ("fact", fact), ("citation", citation)):
        if needed and (not isinstance(row.get(name), str) or not row[name].strip()):
            raise PartialError(f"{where}{q}: field {name!r} must be a non-empty string")
    s, f, c = m.group(1, 2, 3)
    idx = (int(s) - 1, int(f) - 1 if f else None, int(c) - 1 if c else None)
    return q, idx, kind, row


def parse_partial(obj: dict, source: str) -> PartialResponse:
    """One exported line as partial labels; PartialError naming the first row that does not
    hold together."""
    rows = obj.get("abstained")
    if not isinstance(rows, list):
        raise PartialError("field 'abstained' must be a list of answered questions")
    annotator = obj.get("annotator")
    if annotator is not None and not isinstance(annotator, str):
        raise PartialError("field 'annotator' must be a string")
    texts: dict[int, str] = {}
    verifiable: dict[int, bool] = {}
    facts: dict[tuple[int, int], str] = {}
    entailed: dict[tuple[int, int], bool] = {}
    precise: dict[tuple[int, int], dict[int, bool]] = {}
    seen: set[str] = set()
    for n, raw in enumerate(rows, start=1):
        q, (i, j, k), kind, row = _row(raw, n)
        where = f"abstained row {n} ({q}): "
        if q in seen:
            raise PartialError(f"{where}the same question twice")
        seen.add(q)
        text = row["sentence"]
        if texts.setdefault(i, text) != text and _norm(texts[i]) != _norm(text):
            raise PartialError(f"{where}sentence {i + 1} reads differently in another row")
        answer = _answer(row, where)
        if j is None:
            if answer is not None:
                verifiable[i] = answer
            continue
        cits = parse_citations(text)
        if not cits:
            raise PartialError(f"{where}the sentence has no citations to support a fact")
        fact = row["fact"].strip()
        if _norm(facts.setdefault((i, j), fact)) != _norm(fact):
            raise PartialError(f"{where}fact {j + 1} reads differently in another row")
        if k is None:
            if answer is not None:
                entailed[(i, j)] = answer
            continue
        if k >= len(cits) or _norm(cits[k].raw) != _norm(row["citation"]):
            has = f"is {cits[k].raw!r}" if k < len(cits) else f"does not exist ({len(cits)})"
            raise PartialError(
                f"{where}citation {k + 1} of the sentence {has}; the row names {row['citation']!r}"
            )
        if answer is not None:
            precise.setdefault((i, j), {})[k] = answer
    sentences = []
    for i in sorted(texts):
        fs = tuple(
            PartialFact(
                j,
                facts[(si, j)],
                entailed.get((si, j)),
                tuple(sorted(precise.get((si, j), {}).items())),
            )
            for si, j in sorted(facts)
            if si == i
        )
        text = texts[i]
        sentences.append(
            PartialSentence(i, text, tuple(parse_citations(text)), verifiable.get(i), fs)
        )
    return PartialResponse(str(obj["id"]), tuple(sentences), annotator, source)


def check_partial(labels: PartialResponse, sentences: list[str] | tuple[str, ...]) -> str | None:
    """Why these answers are not about this response's sentences (as `murgat segment` prints
    them): the first answered sentence whose text is not the response's sentence at its index."""
    for s in labels.sentences:
        if s.index >= len(sentences):
            return (
                f"people answered about sentence {s.index + 1} ({_norm(s.text)!r}); the response "
                f"has {len(sentences)} sentences"
            )
        if _norm(sentences[s.index]) != _norm(s.text):
            return (
                f"people answered about sentence {s.index + 1} as {_norm(s.text)!r}, but it reads "
                f"{_norm(sentences[s.index])!r}: the answers are not about these sentences"
            )
    return None


__all__ = [
    "PartialError",
    "PartialFact",
    "PartialResponse",
    "PartialSentence",
    "check_partial",
    "parse_partial",
]
