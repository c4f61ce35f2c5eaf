"""A scripted annotator for the `murgat annotate` tests: a fixed answer for each question, read
from what the question shows (as a person reads the page), so that every test that labels the
sample gets the same labels whichever way it answers (Python, HTTP, the keyboard)."""

from __future__ import annotations

import re

NOT_VERIFIABLE = re.compile(r"(therefore|so |hence|the answer|there are)", re.I)


def scripted(question: dict) -> object:
    """The answer to a question as `/api/next` gives it."""
    kind = question["kind"]
    sentence = question["response"]["sentences"][question["sentence"]]
    if kind == "verifiable":
        return not NOT_VERIFIABLE.match(sentence)
    if kind == "facts":
        return question["proposal"]
    if kind == "entailed":
        return "yellow" not in question["fact_text"].lower()
    return question["citation"] == 0  # precise: the first citation is needed, the others not


def key_for(answer: object) -> str:
    """The key a person presses for `answer` on the page (facts: Enter accepts the proposal)."""
    return {True: "y", False: "n", "unsure": "u"}.get(answer, "Enter") if not isinstance(answer, list) else "Enter"
