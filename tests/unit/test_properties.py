"""Properties over any input (hypothesis): the readers, the cleaner, the sentence splitters and
the citation parsers never raise; the splitters cover the text in order; every metric value is
in [0, 1] or None, and MURGAT-S = coverage x F1 whenever it is defined.

Example counts are modest so the suite stays fast; the text strategies mix the fragments that
matter to the grammars (citations, markers, brackets, quotes, line breaks) with any code point,
lone surrogates included.
"""

from __future__ import annotations

import json
import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from murgat_local.grading import (
    FactScore,
    SentenceScore,
    f1,
    score_fact_default,
    score_fact_reference,
    score_response,
)
from murgat_local.inputs.responses import InputError, ResponseItem, iter_records, read_responses
from murgat_local.text.answers import extract_answer
from murgat_local.text.citations import (
    MODALITIES,
    parse_citations,
    parse_citations_reference,
    strip_citations,
    strip_citations_reference,
)
from murgat_local.text.clean import (
    ANSWER_MARK,
    clean_generation,
    clean_generation_reference,
    remove_thinking,
)
from murgat_local.text.segment import segment_response
from murgat_local.text.sentences import _LIST_MARKER, split_sentences, split_sentences_reference

HOSTILE_CHARS = [
    "\ud83d",
    "\udc80",
    "\x00",
    "\x1b",
    "\x07",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\ufffd",
    "\r",
    "\x0b",
    "\x1c",
    "\x85",
    "\u2028",
    "ſ",
    "İ",
    "K",
]
FRAGMENTS = [
    "The man",
    " waves",
    "x",
    "A",
    "b",
    "3.5",
    "0:01",
    "1:2:3:4",
    "99:99",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    ".",
    "!",
    "?",
    "...",
    "…",
    ";",
    ",",
    ":",
    "：",
    "*",
    "_",
    "#",
    "- ",
    "1. ",
    "a) ",
    "Dr.",
    "e.g.",
    "J.",
    "U.S.",
    "-",
    "–",
    " to ",
    '"',
    "“",
    "”",
    "'",
    "«",
    "»",
    "「",
    "」",
    "(",
    ")",
    "[",
    "]",
    "（",
    "）",
    "。",
    "！",
    "？",
    "他走了",
    "(visual, 0:12)",
    "(audio, 1:20-1:30)",
    "[visual, 0:07]",
    "（visual, 0:03）",
    "(visual, 0:02; audio, 0:16)",
    "(smell, 0:10)",
    "(at 0:12)",
    "visual",
    "audio",
    "Reasoning:",
    "Answer: B",
    "**Answer:**",
    "ANSWER - ",
    "Final answer: ",
    "\\boxed{",
    "}",
    "{",
    "\\text{",
    "<think>",
    "</think>",
    "Option C",
] + HOSTILE_CHARS
ANY_CHAR = st.characters(exclude_categories=()) | st.sampled_from(HOSTILE_CHARS)
TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(ANY_CHAR, max_size=3), max_size=40).map(
    "".join
)


def _alnum(s: str) -> int:
    return sum(c.isalnum() for c in s)


def _in_order(pieces: list[str], text: str) -> bool:
    """True when the pieces occur in `text` in this order, without overlapping."""
    pos = 0
    for p in pieces:
        found = text.find(p, pos)
        if found < 0:
            return False
        pos = found + len(p)
    return True


# ---------------------------------------------------------------- readers


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)


def _line(obj_text: tuple) -> bytes:
    kind, text = obj_text
    if kind == "bytes":
        return text.encode("utf-8", "surrogatepass")  # any bytes, surrogates as invalid UTF-8
    row = {"id": text[:3] or "i", "video": "v", "model_generation": text, "options": [text]}
    return json.dumps(row, ensure_ascii=kind == "ascii").encode("utf-8", "surrogatepass")


LINES = st.lists(st.tuples(st.sampled_from(["ascii", "raw", "bytes"]), TEXT), max_size=6)


@settings(max_examples=120, deadline=None)
@given(LINES, st.booleans())
def test_readers_never_raise_and_read_valid_unicode(tmp_path_factory, lines, as_list):
    f = tmp_path_factory.mktemp("r") / "r.jsonl"
    data = b"\n".join(map(_line, lines))
    f.write_bytes(b"[" + data.replace(b"\n", b",") + b"]" if as_list else data)
    items = list(read_responses(f))
    records = list(iter_records(f))
    assert [i.index for i in items] == list(range(len(items))) and len(items) == len(records)
    for item in items:
        assert isinstance(item, (ResponseItem, InputError))
        for s in _strings(list(vars(item).values())):
            s.encode("utf-8")  # strict: the reader repaired anything that is not valid Unicode


# ---------------------------------------------------------------- cleaner


@settings(max_examples=250, deadline=None)
@given(TEXT)
def test_cleaners_never_raise_and_keep_the_reasoning_a_slice_of_the_text(text):
    body = remove_thinking(text)
    cleaned = clean_generation(text)
    assert cleaned.reasoning in body and cleaned.reasoning == cleaned.reasoning.strip()
    assert cleaned.answer_letter is None or re.fullmatch("[A-Z]", cleaned.answer_letter)
    found = extract_answer(text, ["a dog", "the man"])
    assert found.letter in (None, "A", "B")
    reference = clean_generation_reference(text)
    assert reference.reasoning in re.sub(r"<think>.*?</think>", "", text, flags=re.S | re.I).strip()
    for compat in (None, "reference"):
        out = segment_response(text, compat)
        assert all(s["text"] for s in out["sentences"])


# ---------------------------------------------------------------- sentence splitters


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_default_splitter_covers_each_line_in_order(text):
    """Sentences never cross a line; on each line, without its list marker, they are slices of
    the line in order, without overlap, holding every letter and digit; an "Answer:" line and
    a blank line give none. So what lies between sentences is spaces, list markers, "Answer:"
    lines and fragments without a letter or digit."""
    lines = text.splitlines()
    per_line = [split_sentences(line) for line in lines]
    assert split_sentences(text) == [s for ss in per_line for s in ss]
    for line, sentences in zip(lines, per_line):
        if not line.strip() or ANSWER_MARK.match(line):
            assert sentences == []
            continue
        body = _LIST_MARKER.sub("", line, count=1)
        assert _in_order(sentences, body)
        assert sum(map(_alnum, sentences)) == _alnum(body)
        assert all(s == s.strip() and any(c.isalnum() for c in s) for s in sentences)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_reference_splitter_covers_the_text_in_order(text):
    """The reference's sentences are slices of the text in order, without overlap, holding every
    character but whitespace."""
    sentences = split_sentences_reference(text)
    assert _in_order(sentences, text)
    assert sum(len(s) - sum(c.isspace() for c in s) for s in sentences) == len(text) - sum(
        c.isspace() for c in text
    )


# ---------------------------------------------------------------- citation parsers


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_citation_parsers_never_raise_and_give_usable_times(text):
    for c in parse_citations(text):
        assert c.raw.startswith("(") and c.raw.endswith(")")
        if c.valid:
            assert c.modality in MODALITIES and math.isfinite(c.start) and 0 <= c.start <= c.end
        else:
            assert isinstance(c.error, str) and c.error
    for c in parse_citations_reference(text):
        assert c.error in (None, "unparseable timestamp") and c.modality == c.modality.lower()
    for stripped in (strip_citations(text), strip_citations_reference(text)):
        assert stripped == stripped.strip()


# ---------------------------------------------------------------- metric

VERDICT = st.sampled_from([True, False, None])


@st.composite
def fact_scores(draw) -> FactScore:
    n = draw(st.integers(0, 4))
    usable = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    alone = {i: draw(VERDICT) for i in range(n)}
    if draw(st.booleans()):
        without = {i: draw(VERDICT) for i in range(n)}
        return score_fact_default(usable, draw(VERDICT), alone, without)
    extracted = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return score_fact_reference(usable, extracted, alone, draw(VERDICT))


SENTENCES = st.lists(
    st.builds(
        SentenceScore,
        verifiable=VERDICT,
        cited=st.booleans(),
        facts=st.lists(fact_scores(), max_size=3).map(tuple),
        unscored=st.sampled_from([None, "unparsed"]),
    ),
    max_size=6,
)


def _unit(v) -> bool:
    return v is None or 0.0 <= v <= 1.0


@settings(max_examples=300, deadline=None)
@given(fact_scores())
def test_fact_scores_are_in_the_unit_interval_or_both_unknown(fact):
    assert (fact.precision is None) == (fact.recall is None)
    assert _unit(fact.precision) and _unit(fact.recall)


@settings(max_examples=300, deadline=None)
@given(SENTENCES, st.booleans())
def test_response_scores_are_in_the_unit_interval_and_murgat_s_is_coverage_times_f1(
    sentences, reference
):
    score = score_response(sentences, reference=reference)
    values = (
        score.coverage,
        score.precision,
        score.recall,
        score.f1,
        score.murgat_s,
        score.scored_fraction,
    )
    assert all(_unit(v) for v in values), values
    if score.murgat_s is not None:
        assert score.coverage is not None and score.f1 is not None
        assert score.murgat_s == score.coverage * score.f1
        assert score.f1 == f1(score.precision, score.recall)
    if score.f1 is None:
        assert score.murgat_s is None
