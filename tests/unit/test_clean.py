from murgat_local.text.clean import clean_generation, clean_generation_reference


def test_think_reasoning_and_answer():
    text = "<think>scratch (visual, 0:01)</think>\n**Reasoning:** The man waves (visual, 0:02). So B.\n**Answer:** (B) the man"
    c = clean_generation(text)
    assert c.reasoning == "The man waves (visual, 0:02). So B."
    assert c.answer_letter == "B"


def test_inline_answer_is_not_part_of_the_reasoning():
    c = clean_generation("A cat sits (visual, 0:01). Answer: C")
    assert c.reasoning == "A cat sits (visual, 0:01)."
    assert c.answer_letter == "C"


def test_boxed_answer_wins():
    assert clean_generation("Reasoning: x.\nAnswer: A \\boxed{D}").answer_letter == "D"


def test_reference_keeps_whole_text_without_answer_marker():
    text = "Reasoning: The man waves (visual, 0:02)."
    assert clean_generation_reference(text).reasoning == text
    assert clean_generation(text).reasoning == "The man waves (visual, 0:02)."
