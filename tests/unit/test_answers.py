import pytest

from murgat_local.text.answers import AnswerExtraction, extract_answer
from murgat_local.text.clean import clean_generation, clean_generation_reference

OPTIONS = ["a red ball", "a blue cup", "The man waves.", "is running"]
PREFIXED = ["A. blue", "B. red", "C. black", "D. white"]  # how the bundled sample writes them

CASES = [
    # (response, options, letter, path)
    ("Reasoning: x.\nAnswer: B", None, "B", "answer_line"),
    ("**Answer:** B", None, "B", "answer_line"),
    ("**Answer**: (C) the man", None, "C", "answer_line"),
    ("Final answer: (C)", None, "C", "answer_line"),
    ("answer: b", None, "B", "answer_line"),
    ("Answer: a.", None, "A", "answer_line"),
    ("Answer: The answer is D.", None, "D", "answer_line"),
    ("Answer: B) a cat", None, "B", "answer_line"),
    ("Answer: [D]", None, "D", "answer_line"),
    ("Answer：B", None, "B", "answer_line"),
    ("ANSWER - C", None, "C", "answer_line"),
    ("Steps.\n**Answer** – c", None, "C", "answer_line"),
    ("**Answer:**\n\nB", None, "B", "answer_line"),
    ("Answer: Option C", OPTIONS, "C", "answer_line"),
    ("Answer: **C. the man waves**", OPTIONS, "C", "answer_line"),
    ("A cat sits (visual, 0:01). Answer: C", None, "C", "answer_line"),
    ("Answer: A\nMore thought.\nAnswer: D", None, "D", "answer_line"),
    ("\\boxed{B}", None, "B", "boxed"),
    ("The final answer is $\\boxed{\\text{B}}$.", None, "B", "boxed"),
    ("$\\boxed{\\textbf{(D)}}$", OPTIONS, "D", "boxed"),
    ("\\boxed{B: a blue cup}", OPTIONS, "B", "boxed"),
    ("\\boxed{A blue cup}", OPTIONS, "B", "boxed"),
    ("First \\boxed{A}, on reflection \\boxed{C}", OPTIONS, "C", "boxed"),
    ("Reasoning: x.\nAnswer: A \\boxed{D}", None, "D", "boxed"),
    ("\\boxed{}\nAnswer: B", OPTIONS, "B", "answer_line"),
    ("<think>Answer: A</think>Answer: C", OPTIONS, "C", "answer_line"),
    ("<think>\\boxed{A}</think>\nThe cup is blue.\nAnswer: b", OPTIONS, "B", "answer_line"),
    ("scratch</think>Answer: D", OPTIONS, "D", "answer_line"),
    ("Answer: the man waves", OPTIONS, "C", "answer_line"),
    ("Answer: A RED BALL!", OPTIONS, "A", "answer_line"),
    ("Answer: is running", OPTIONS, "D", "answer_line"),  # an option's text, not a lead-in
    ("Answer: black", PREFIXED, "C", "answer_line"),
    ("Answer: 2", ["1", "2", "3"], "B", "answer_line"),
    # no letter: the caller asks a judge
    ("Answer: E", OPTIONS, None, None),  # past the last option
    ("\\boxed{E}\nAnswer: B", OPTIONS, None, None),  # the box names a letter, so it decides
    ("Answer: A man waves", None, None, None),  # English, not a choice
    ("Answer: I think B", None, None, None),
    ("Answer: a green hat", OPTIONS, None, None),
    ("The answer is B", None, None, None),  # no marker
    ("it is an answer - maybe B", None, None, None),  # a dash counts only at a line start
    ("<think>Answer: A", OPTIONS, None, None),  # thinking never closed
    ("", None, None, None),
]


@pytest.mark.parametrize("text,options,letter,path", CASES)
def test_extract_answer(text, options, letter, path):
    found = extract_answer(text, options)
    assert (found.letter, found.path) == (letter, path)


def test_raw_is_what_the_letter_was_read_from():
    assert extract_answer("Answer: **B) a cat**") == AnswerExtraction(
        "B", "answer_line", "B) a cat"
    )
    assert extract_answer("\\boxed{\\text{C}}") == AnswerExtraction("C", "boxed", "\\text{C}")
    assert extract_answer("Answer: E", OPTIONS) == AnswerExtraction(None, None, "E")
    assert extract_answer("nothing to see") == AnswerExtraction(None, None, "")


def test_default_mode_letter_comes_from_extract_answer_and_reference_is_unchanged():
    text = "Reasoning: The cup is blue (visual, 0:01).\nanswer: b"
    assert clean_generation(text).answer_letter == "B"
    assert clean_generation(text).answer_text == "b"
    assert clean_generation_reference(text).answer_letter is None  # the reference needs a capital
    assert clean_generation_reference("Reasoning: x.\nAnswer: A man").answer_letter == "A"
    assert clean_generation("Reasoning: x.\nAnswer: A man").answer_letter is None
