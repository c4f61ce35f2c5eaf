import pytest

from murgat_local.text.citations import (
    parse_citations,
    parse_citations_reference,
    strip_citations,
    strip_citations_reference,
)


def one(text):
    (c,) = parse_citations(text)
    return c


@pytest.mark.parametrize(
    "text,modality,start,end",
    [
        ("The man points (visual, 0:12).", "visual", 12, 12),
        ("A bell rings (audio, 1:20-1:30).", "audio", 80, 90),
        ("A bell rings (AUDIO, 1:20 - 1:30).", "audio", 80, 90),
        ("A bell rings (Audio, 1:20–1:30).", "audio", 80, 90),
        ("Long video (visual, 1:02:03).", "visual", 3723, 3723),
        ("Decimal (visual, 0:12.5-0:14.25).", "visual", 12.5, 14.25),
        ("Square brackets [visual, 0:07].", "visual", 7, 7),
    ],
)
def test_default_formats(text, modality, start, end):
    c = one(text)
    assert (c.modality, c.start, c.end, c.error) == (modality, start, end, None)


def test_several_in_one_parenthesis():
    cs = parse_citations("He speaks (visual, 0:02-0:04; audio, 0:02-0:04; visual, 0:16).")
    assert [(c.modality, c.start, c.end) for c in cs] == [
        ("visual", 2, 4),
        ("audio", 2, 4),
        ("visual", 16, 16),
    ]


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("Bad time (visual, 99:99).", "99 seconds"),
        ("Reversed (audio, 0:30-0:10).", "after end"),
        ("Minutes (visual, 1:75:00).", "75 minutes"),
        ("Odd modality (smell, 0:10).", "unknown modality"),
    ],
)
def test_invalid_citations_carry_a_reason(text, fragment):
    c = one(text)
    assert not c.valid and fragment in c.error


def test_prose_parentheses_are_not_citations():
    assert parse_citations("He leaves (at 0:12) and returns (see above).") == []
    assert (
        strip_citations("He waves (visual, 0:12) and smiles (happily).")
        == "He waves and smiles (happily)."
    )


def test_reference_grammar():
    cs = parse_citations_reference(
        "X (Visual, 0:02-0:04; audio, 99:99; visual, 0:12.5; visual, 1:02:03)."
    )
    # the reference accepts 99:99 as 6039 s, and drops decimals and H:MM:SS entirely
    assert [(c.modality, c.start, c.end) for c in cs] == [("visual", 2, 4), ("audio", 6039, 6039)]
    assert parse_citations_reference("Y (audio, 0:10 - 0:12).") == []  # spaces around '-' rejected
    assert strip_citations_reference("A cat (visual, 0:01) sits (quietly).") == "A cat sits."
