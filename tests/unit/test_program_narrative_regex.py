"""Program-aided plans: the narrative plan's regex (plain features only, an outlines-core index)
agrees with its parser."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.program_tools import DECLARATIVE_NARRATIVE, IMPERATIVE_NARRATIVE

from murgat_local.generate.program import (
    NarrativePlan,
    ProgramError,
    format_seconds,
    narrative_regex,
    parse_narrative,
)
from murgat_local.text.citations import parse_time

NARROW = 5  # lines, for the property tests: the regex grows linearly, the checks stay fast


_RX = {imp: re.compile(narrative_regex(imp, NARROW)) for imp in (True, False)}


_RX_NO_TIMES = re.compile(narrative_regex(True, NARROW, allow_times=False))


def _agree(text: str, imperative: bool) -> bool:
    matched = _RX[imperative].fullmatch(text) is not None
    parsed = isinstance(parse_narrative(text, imperative, NARROW), NarrativePlan)
    strict_matched = _RX_NO_TIMES.fullmatch(text) is not None
    strict_parsed = isinstance(
        parse_narrative(text, True, NARROW, allow_times=False), NarrativePlan
    )
    return matched == parsed and strict_matched == strict_parsed


def test_regex_uses_only_plain_features():
    rx = narrative_regex(True, 32)
    for feature in ("(?=", "(?!", "(?<", "(?P", "\\1"):
        assert feature not in rx
    assert re.search(r"(?<!\\)[*+]", rx) is None  # every repetition is bounded
    assert re.search(r"\{\d+,\}", rx) is None


def test_valid_plans_match_and_parse():
    for text, imp in [
        (IMPERATIVE_NARRATIVE, True),
        (DECLARATIVE_NARRATIVE, False),
        (DECLARATIVE_NARRATIVE, True),
        ('1. synthesize("x")', False),
        ('1. describe("0:01", "audio","x")\n2. synthesize("y")\n', False),
    ]:
        assert _RX[imp].fullmatch(text), text
        plan = parse_narrative(text, imp, NARROW)
        assert isinstance(plan, NarrativePlan), plan
    assert re.fullmatch(narrative_regex(True, 32), IMPERATIVE_NARRATIVE)


MALFORMED = [
    "",
    '1. synthesize("x")\n\n',
    '1. synthesize("")',  # empty string
    '1. synthesize("' + "a" * 301 + '")',  # too long
    '1. synthesize("a"b")',  # unescaped quote
    '1. synthesize("a\\n")',  # only \" and \\ escapes
    '2. synthesize("x")',  # wrong number
    '1.synthesize("x")',
    '1. synthesize("x") ',
    '1. find("x", "visual")',  # must end with synthesize
    '1. describe("0:60", "visual", "x")\n2. synthesize("y")',  # seconds >= 60
    '1. describe("0:1", "visual", "x")\n2. synthesize("y")',
    '1. describe("0:01", "smell", "x")\n2. synthesize("y")',
    '1. describe("0:01", "visual")\n2. synthesize("y")',
    '1. describe(#2, "visual", "x")\n2. synthesize("y")',
    '1. describe("0:01", "visual", "x")\r\n2. synthesize("y")',
    "\n".join(f'{i}. describe("0:01", "visual", "x")' for i in range(1, NARROW + 1))
    + f'\n{NARROW + 1}. synthesize("y")',
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_plans_neither_match_nor_parse(text):
    for imp in (True, False):
        assert _RX[imp].fullmatch(text) is None
        assert isinstance(parse_narrative(text, imp, NARROW), ProgramError)


_piece = st.sampled_from(
    [
        "find(",
        "describe(",
        "synthesize(",
        '"',
        '", "',
        ", ",
        '"visual"',
        '"audio"',
        "#1",
        "#2",
        "#3",
        "#0",
        "0:12",
        "1:02:03",
        "0:12-0:15",
        "9:99",
        "-",
        ")",
        "x",
        "a b",
        '\\"',
        "\\\\",
        "\\",
        "\n",
        " ",
        "1. ",
        "2. ",
    ]
)


_call = st.one_of(
    st.builds(
        lambda q, m: f'find("{q}", "{m}")',
        st.text('ab \\"#', min_size=0, max_size=4),
        st.sampled_from(["visual", "audio", "x"]),
    ),
    st.builds(
        lambda t, m, q: f'describe({t}, "{m}", "{q}")',
        st.sampled_from(
            ['"0:12"', '"0:12-1:15"', '"1:00:00"', "#1", "#2", "#3", "#9", '"0:99"', '""']
        ),
        st.sampled_from(["visual", "audio"]),
        st.text('ab\\"', min_size=0, max_size=3),
    ),
    st.builds(lambda q: f'synthesize("{q}")', st.text('ab\\"\n', min_size=0, max_size=3)),
    st.lists(_piece, max_size=6).map("".join),
)


@st.composite
def _plans(draw):
    calls = draw(st.lists(_call, min_size=0, max_size=NARROW + 1))
    numbered = draw(st.booleans())
    lines = [
        (f"{i}. " if numbered or draw(st.booleans()) else f"{draw(st.integers(0, 9))}. ") + c
        for i, c in enumerate(calls, start=1)
    ]
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", " "]))


@settings(max_examples=400, deadline=None)
@given(_plans(), st.booleans())
def test_parse_agrees_with_the_regex(text, imperative):
    assert _agree(text, imperative), text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.booleans())
def test_parse_agrees_with_the_regex_on_noise(text, imperative):
    assert _agree(text, imperative)


def test_every_parsed_timestamp_reads_back_with_the_citation_parser():
    plan = parse_narrative(DECLARATIVE_NARRATIVE, False, NARROW)
    assert isinstance(plan, NarrativePlan)
    for step in plan.steps:
        if step.timestamps:
            assert all(parse_time(t)[1] is None for t in step.timestamps.split("-"))
    for seconds in (0, 9.5, 59.96, 61, 3725):
        assert parse_time(format_seconds(seconds))[1] is None


def test_regex_builds_an_outlines_core_index():
    oc = pytest.importorskip("outlines_core")
    import string

    chars = [c for c in string.printable if c not in "\x0b\x0c"]
    vocabulary = oc.Vocabulary(len(chars), {c: [i] for i, c in enumerate(chars)})
    oc.Index(narrative_regex(True, 2), vocabulary)
