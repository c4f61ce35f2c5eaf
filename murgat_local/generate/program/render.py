"""The response of a program-aided responder, written from the calls that ran.

    Reasoning: <observation 1> (visual, 0:04-0:09). <observation 2> (audio, 0:10-0:14).
    <synthesis, its [k] references replaced by evidence k's citation>
    Answer: <letter>

Every citation in it is the span and modality of an executed `query`/`describe` call, written
here, so it is always well formed; citations a model wrote itself (in an observation or in the
synthesis) are removed first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text.citations import strip_citations
from .tools import Evidence

_INDEX = re.compile(r"\[\s*(\d{1,3})\s*\]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Synthesized:
    """What the last `answer` / `synthesize` call decided, and the evidence it was shown, in the
    order it numbered it (1-based)."""

    text: str
    letter: str | None
    evidence: tuple[Evidence | str, ...]


def citation(ev: Evidence) -> str:
    return f"({ev.modality}, {ev.time})"


def _sentence(text: str) -> str:
    body = _SPACE.sub(" ", strip_citations(text)).strip()
    return body.rstrip(" .!?;:,")


def expand_indices(text: str, evidence: tuple[Evidence | str, ...]) -> str:
    """`[k]` becomes evidence k's citation; a number that names no observation is dropped."""

    def swap(m: re.Match) -> str:
        k = int(m.group(1))
        ev = evidence[k - 1] if 1 <= k <= len(evidence) else None
        if isinstance(ev, Evidence):
            return " " + citation(ev)
        return ""

    out = _INDEX.sub(swap, strip_citations(text))
    out = re.sub(r"\)\s+\(", ") (", out)
    return _SPACE.sub(" ", re.sub(r"\s+([.,;:!?])", r"\1", out)).strip()


def render_response(observations: list[Evidence], synthesis: Synthesized) -> str:
    """The response text: each observation with its citation, then the synthesis, then the answer."""
    parts = []
    for ev in observations:
        sentence = _sentence(ev.text)
        if sentence:
            parts.append(f"{sentence} {citation(ev)}.")
    closing = expand_indices(synthesis.text, synthesis.evidence)
    if closing:
        parts.append(closing if closing[-1] in ".!?)" else closing + ".")
    letter = synthesis.letter if synthesis.letter else "NONE"
    return "Reasoning: " + " ".join(parts) + f"\nAnswer: {letter}"
