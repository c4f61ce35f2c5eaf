"""Open questions: the short answer a response gives, and whether it matches the gold answer.

A response's answer is read where a letter would be (the last `\\boxed{}`, else the last
`Answer:` line; thinking ignored). Two answers match when both read as numbers within a relative
tolerance (`1,000`, `12.5%`, `$3`, `2/3` and `1e3` are numbers), or, failing that, when their
normalized texts are equal: case, punctuation, articles and spacing ignored, LaTeX wrappers
unwrapped.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .answers import stated_answers, strip_markup

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FRACTION = re.compile(r"([-+]?\d+)\s*/\s*(\d+)")
_ARTICLES = {"a", "an", "the"}


def open_answer(text: str) -> str | None:
    """The response's stated short answer, or None when it states none."""
    for _, raw in stated_answers(text):
        value = strip_markup(raw).strip().rstrip(".")
        if value:
            return value
    return None


def as_number(text: str) -> float | None:
    """The one number `text` states (units, thousands separators and a percent sign allowed)."""
    s = text.strip().replace(",", "").replace("$", "").replace("\\%", "%").rstrip("%").strip()
    m = _FRACTION.fullmatch(s)
    if m and int(m.group(2)) != 0:
        return float(Fraction(int(m.group(1)), int(m.group(2))))
    found = _NUMBER.findall(s)
    if len(found) != 1:
        return None
    rest = s.replace(found[0], "", 1).strip()
    if rest and not rest.isalpha():  # "12 cm" is 12; "12-15" is not a number
        return None
    value = float(found[0])
    return value if math.isfinite(value) else None


def normalize_text(text: str) -> str:
    kept = "".join(ch if ch.isalnum() else " " for ch in strip_markup(text).casefold())
    return " ".join(w for w in kept.split() if w not in _ARTICLES)


def matches(predicted: str | None, gold: str | None, tolerance: float = 0.01) -> bool | None:
    """Whether `predicted` answers `gold`; None when either is missing (ungraded)."""
    if predicted is None or gold is None or not str(gold).strip():
        return None
    p, g = as_number(predicted), as_number(str(gold))
    if p is not None and g is not None:
        return abs(p - g) <= tolerance * max(abs(g), 1e-9) or p == g
    return normalize_text(predicted) == normalize_text(str(gold))
