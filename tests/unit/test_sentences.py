from murgat_local.text.sentences import split_sentences, split_sentences_reference


def test_citations_stay_with_their_sentence():
    text = "The man points (visual, 0:12). He sits down. (visual, 0:15) Then he waves."
    assert split_sentences(text) == [
        "The man points (visual, 0:12).",
        "He sits down. (visual, 0:15)",
        "Then he waves.",
    ]
    assert split_sentences_reference(text) == split_sentences(text)


def test_default_does_not_break_on_abbreviations_decimals_quotes():
    text = 'Dr. Smith says "Stop. Now!" loudly (audio, 0:20). It costs 3.5 dollars, e.g. cheap. He waits... and waves.'
    assert split_sentences(text) == [
        'Dr. Smith says "Stop. Now!" loudly (audio, 0:20).',
        "It costs 3.5 dollars, e.g. cheap.",
        "He waits... and waves.",
    ]


def test_reference_breaks_where_the_reference_does():
    text = 'Dr. Smith says "Stop." It costs 3.5 dollars.'
    assert split_sentences_reference(text) == [
        "Dr.",
        'Smith says "Stop.',
        '" It costs 3.',
        "5 dollars.",
    ]


def test_cjk_full_stops_lines_lists_and_answer_line():
    text = "他走了。她笑了（visual, 0:03）。\n- A red car appears (visual, 0:01).\n2. It stops.\nAnswer: B"
    assert split_sentences(text) == [
        "他走了。",
        "她笑了（visual, 0:03）。",
        "A red car appears (visual, 0:01).",
        "It stops.",
    ]


def test_citation_after_the_final_period():
    assert split_sentences("A dog barks (audio, 0:01).(visual, 0:02) A cat.") == [
        "A dog barks (audio, 0:01).(visual, 0:02)",
        "A cat.",
    ]
