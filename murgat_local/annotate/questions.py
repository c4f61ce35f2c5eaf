"""Which question comes next for one response, given the answers so far. Pure: no I/O.

The questions follow the protocol's stages, and only those the answers make necessary are asked:

  s{i}.verifiable          every sentence
  s{i}.facts               a sentence answered verifiable that has citations
  s{i}.f{j}.entailed       every fact of an answered decomposition
  s{i}.f{j}.c{k}.precise   every citation of an entailed fact, when the sentence has 2 or more

(1-based.) A fact of a one-citation sentence that is entailed needs that citation; with two
citations, when the first is not needed the second is (the pair supports the fact and the first
adds nothing, so the second supports it alone), so it is not asked. "Needed" is the scorer's
precision rule (strict necessity): a citation is needed when it supports the fact on its own, or
when the others do not support it without it.

An answer is true, false, a list of facts (for `facts`), or "unsure": the question is then
skipped with nothing asked that depends on it, and counted. Later questions never depend on
later answers, so a response's questions can be listed from its answers in one pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..engines.constraints import ParseFailure, parse_verdict
from ..judges.verdicts import AtomicFacts
from ..text.labels import normalize_ws
from .source import Item

KINDS = ("verifiable", "facts", "entailed", "precise")
UNSURE = "unsure"
# Human facts answer the decompose stage when the labels judge (`human:PATH`), so they must be
# what that stage's verdict admits: its grammar's bounds, and no quote, backslash or control
# character in a fact.
_SCHEMA = AtomicFacts.model_json_schema()["properties"]["facts"]
MAX_FACTS = _SCHEMA["maxItems"]
MAX_FACT_CHARS = _SCHEMA["items"]["maxLength"]
_NOT_PLAIN = re.compile(r'["\\\x00-\x1F\x7F-\x9F]')


@dataclass(frozen=True)
class Question:
    suffix: str  # "s1.f2.entailed": the key within its response
    kind: str
    sentence: int  # 0-based, as are `fact` and `citation`
    fact: int | None = None
    citation: int | None = None


def _parse(suffix: str) -> Question:
    """The question a suffix names ("s1.f2.c1.precise")."""
    *where, kind = suffix.split(".")
    n = [int(w[1:]) - 1 for w in where]
    return Question(suffix, kind, *n)


def questions(item: Item, answers: Mapping[str, object]) -> Iterator[Question]:
    """The questions of `item` that its `answers` (by suffix) make necessary, in asking order.
    An item that names its questions (`ask`, from `--abstained`) is asked exactly those."""
    if item.ask is not None:
        yield from map(_parse, item.ask)
        return
    for i, _ in enumerate(item.sentences):
        yield Question(f"s{i + 1}.verifiable", "verifiable", i)
    for i, s in enumerate(item.sentences):
        if s.citations and answers.get(f"s{i + 1}.verifiable") is True:
            yield Question(f"s{i + 1}.facts", "facts", i)
    for i, s in enumerate(item.sentences):
        facts = answers.get(f"s{i + 1}.facts")
        if not isinstance(facts, list):
            continue
        n = len(s.citations)
        for j, _ in enumerate(facts):
            base = f"s{i + 1}.f{j + 1}"
            yield Question(f"{base}.entailed", "entailed", i, j)
            if answers.get(f"{base}.entailed") is not True or n < 2:
                continue
            for k in range(n):
                if n == 2 and k == 1 and answers.get(f"{base}.c1.precise") is False:
                    break
                yield Question(f"{base}.c{k + 1}.precise", "precise", i, j, k)


def open_questions(item: Item, answers: Mapping[str, object]) -> list[Question]:
    return [q for q in questions(item, answers) if q.suffix not in answers]


def next_question(item: Item, answers: Mapping[str, object]) -> Question | None:
    return next((q for q in questions(item, answers) if q.suffix not in answers), None)


def find(item: Item, answers: Mapping[str, object], suffix: str) -> Question | None:
    """The question `suffix` names, if it is necessary and unanswered."""
    return next(
        (q for q in questions(item, answers) if q.suffix == suffix and suffix not in answers), None
    )


def check_answer(question: Question, value: object) -> tuple[object, str | None]:
    """The answer as stored, or why it does not answer `question`."""
    if value == UNSURE:
        return UNSURE, None
    if question.kind != "facts":
        if isinstance(value, bool):
            return value, None
        return None, f"a {question.kind} question takes true, false or {UNSURE!r}"
    if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
        return None, f"a facts question takes a list of facts (strings) or {UNSURE!r}"
    facts = [" ".join(f.split()) for f in value]
    facts = [f for f in facts if f]
    if not facts:
        return None, "give at least one fact (or answer unsure)"
    if len(facts) > MAX_FACTS:
        return None, f"at most {MAX_FACTS} facts per sentence (what the decomposer stage takes)"
    long = next((f for f in facts if len(f) > MAX_FACT_CHARS), None)
    if long is not None:
        return None, f"a fact has at most {MAX_FACT_CHARS} characters (split it): {long[:40]!r}..."
    odd = next((f for f in facts if _NOT_PLAIN.search(f)), None)
    if odd is not None:
        return (
            None,
            f"a fact may not hold a double quote, a backslash or a control character: {odd!r}",
        )
    seen: set[str] = set()
    for f in facts:
        if normalize_ws(f) in seen:
            return None, f"the same fact twice: {f!r}"
        seen.add(normalize_ws(f))
    as_verdict = json.dumps({"facts": facts}, ensure_ascii=False, separators=(",", ":"))
    if isinstance(parse_verdict(AtomicFacts, as_verdict), ParseFailure):
        return None, "these facts are not what the decomposer stage admits"
    return facts, None


def plain(text: str) -> str:
    """`text` as a fact may hold it: straight double quotes become typographic ones, in pairs."""
    parts = text.split('"')
    out = parts[0]
    for k, part in enumerate(parts[1:]):
        out += ("\u201c" if k % 2 == 0 else "\u201d") + part
    return " ".join(re.sub(r"[\x00-\x1F\x7F-\x9F]", " ", out).split())


def precise_labels(n: int, answers: Mapping[str, object], base: str) -> tuple[bool, ...] | None:
    """`precise` for an entailed fact `base` ("s1.f2") of a sentence with `n` citations; None when
    an answer is unsure or missing."""
    if n == 1:
        return (True,)
    out: list[bool] = []
    for k in range(n):
        v = answers.get(f"{base}.c{k + 1}.precise")
        if v is None and n == 2 and k == 1 and out == [False]:
            v = True
        if not isinstance(v, bool):
            return None
        out.append(v)
    return tuple(out)


def proposal(
    item: Item, question: Question, answers: Mapping[str, object], show_judge: bool
) -> tuple[object, str | None]:
    """What the page offers before the annotator answers, and where it comes from.

    Facts always have a starting point: the judge's decomposition when shown, else the sentence's
    claim as one fact. Every other proposal is the judge's, and only when shown."""
    s = item.sentences[question.sentence]
    p = s.proposal
    if question.kind == "facts":
        if show_judge and p is not None and p.facts:
            return list(p.facts), "judge"
        return [plain(s.claim)], "sentence"
    if not show_judge or p is None:
        return None, None
    if question.kind == "verifiable":
        return p.verifiable, "judge" if p.verifiable is not None else None
    facts = answers.get(f"s{question.sentence + 1}.facts")
    if not isinstance(facts, list) or p.facts is None or question.fact is None:
        return None, None
    text = normalize_ws(facts[question.fact])
    j = next((k for k, f in enumerate(p.facts) if normalize_ws(f) == text), None)
    if j is None:
        return None, None
    if question.kind == "entailed":
        value = p.entailed[j] if j < len(p.entailed) else None
    else:
        row = p.precise[j] if j < len(p.precise) else ()
        c = question.citation
        value = row[c] if c is not None and c < len(row) else None
    return value, "judge" if value is not None else None


__all__ = [
    "KINDS",
    "Question",
    "UNSURE",
    "check_answer",
    "find",
    "next_question",
    "open_questions",
    "precise_labels",
    "proposal",
    "questions",
]
