import pytest

from murgat_local.text.citations import (
    parse_citations,
    parse_citations_reference,
    strip_citations,
    strip_citations_reference,
    unparsed_citations,
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


# ---------------------------------------------------------------- forms read in default mode only


@pytest.mark.parametrize(
    ("text", "default", "reference"),
    [
        # two modalities at once: one citation per modality, the same times
        ("A flash and a bang (visual & audio, 0:02).", [("visual", 2, 2), ("audio", 2, 2)], []),
        ("Both (visual and audio, 0:01-0:03).", [("visual", 1, 3), ("audio", 1, 3)], []),
        # seconds with their unit
        ("It turns blue (visual, 12s-14s).", [("visual", 12, 14)], []),
        ("A beep (audio, 2.5s).", [("audio", 2.5, 2.5)], []),
        ("A range (visual, 12-14s).", [("visual", 12, 14)], []),
        ("Spelled out (visual, 3 seconds).", [("visual", 3, 3)], []),
        # M:SS, which both read
        ("Plain (visual, 0:12).", [("visual", 12, 12)], [("visual", 12, 12)]),
    ],
)
def test_forms_with_a_clear_meaning_are_read_in_default_mode_only(text, default, reference):
    assert [(c.modality, c.start, c.end) for c in parse_citations(text)] == default
    assert all(c.error is None for c in parse_citations(text))
    assert [(c.modality, c.start, c.end) for c in parse_citations_reference(text)] == reference
    assert unparsed_citations(text) == []  # read: nothing left over


@pytest.mark.parametrize(
    ("text", "unparsed"),
    [
        ("It ends dark (visual, around the end).", ["(visual, around the end)"]),
        ("A sound [audio: the bell].", ["(audio: the bell)"]),
        ("The screen (visual).", ["(visual)"]),
        ("Both (visual & audio, later).", ["(visual & audio, later)"]),
        ("Bad time (visual 1:2:3:4).", ["(visual 1:2:3:4)"]),
        ("One of each (visual, 0:01; audio, near the start).", ["(audio, near the start)"]),
        # prose in brackets is not citation-like
        ("He leaves (at 0:12) and returns (see the video). (sound familiar?)", []),
        # read, even if unusable: a citation with its reason, not an unparsed one
        ("Odd (smell, 0:10). Bad (visual, 99:99).", []),
    ],
)
def test_citation_like_text_that_is_not_read_is_listed(text, unparsed):
    assert unparsed_citations(text) == unparsed
    # the reference grammar reads none of it either (it keeps M:SS only)
    assert all(c.raw not in unparsed for c in parse_citations_reference(text))


def test_unparsed_citations_are_recorded_on_the_sentence_and_counted(tmp_path, media_root):
    from support.report_fixtures import _score
    from support.tables import shown

    from murgat_local.reports.table import summary_table
    from murgat_local.results import Summary, layout, read_score_records, read_summary

    rows = [
        {
            "id": "r1",
            "video": "colors",
            "model_generation": "The screen is red (visual, 0:00). It ends dark (visual, around "
            "the end). A beep (audio, 2.5s). Both (visual & audio, 0:02).",
        }
    ]
    _score(media_root, rows, tmp_path / "out")
    (rec,) = read_score_records(tmp_path / "out" / layout.SCORES)
    sentences = rec.trace.sentences
    assert [s.unparsed_citations for s in sentences] == [[], ["(visual, around the end)"], [], []]
    assert [len(s.citations) for s in sentences] == [1, 0, 1, 2]
    summary = read_summary(tmp_path / "out" / layout.SUMMARY)
    assert isinstance(summary, Summary) and summary.unparsed_citations == 1
    table = " ".join(" ".join(shown(summary_table(summary), 100)).split())
    assert "unparsed citations: 1" in table
