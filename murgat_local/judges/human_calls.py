"""What a judge call asks, read out of its prompt, for the human-labels engine (`human.py`).

A call names its sentence or claim in the prompt's fences and its evidence on the prompt's
`Evidence:` line; these readers find them (a label text keyed as it reaches a prompt, a citation
as the prompt describes it), shape a YES/NO answer as the stage's verdict, and raise `Refuse`
with the reason where the prompt or a partial label gives no answer. Apart from `human.py`,
which holds the answering rules, because how the protocol writes its prompts changes with the
prompts, not with the rules.
"""

from __future__ import annotations

import re

from ..text.labels import normalize_ws
from .evidence import describe_evidence
from .prompts import escape_fences
from .verdicts import ReasonedYesNo

_EVIDENCE_TAIL = " (attached, in this order)"


def _fenced(prompt: str, label: str) -> str | None:
    m = re.search(rf"<<<{label}\n(.*?)\n{label}>>>", prompt, re.S)
    return m.group(1) if m else None


def _key(text: str) -> str:
    """A label text as it reaches a prompt (fence-escaped), whitespace-normalized."""
    return normalize_ws(escape_fences(text))


def _describe(c) -> str | None:
    try:
        return describe_evidence([c]).removesuffix(_EVIDENCE_TAIL)
    except Exception:  # a citation without a time is never attached
        return None


class Refuse(Exception):
    pass


def _attached(prompt: str) -> list[str]:
    """The evidence a call attaches, as its prompt's `Evidence:` line names it."""
    m = re.search(r"^Evidence: (.*)$", prompt, re.M)
    if m is None or not m.group(1).endswith(_EVIDENCE_TAIL):
        raise Refuse("the prompt does not name its evidence")
    return m.group(1).removesuffix(_EVIDENCE_TAIL).split("; ")


def _fence(prompt: str, label: str, why: str) -> str:
    """The text a judge prompt fences as `label` (a sentence, a claim): what the call is about."""
    found = _fenced(prompt, label)
    if found is None:
        raise Refuse(f"no {label.lower()} {why} in the prompt")
    return found


def _settled(out: bool | str) -> bool:
    """A partial-labels answer, or the reason it cannot be given (refused)."""
    if isinstance(out, str):
        raise Refuse(out)
    return out


def _yes_no(verdict: type | None, yes: bool) -> dict:
    answer = {"label": "YES" if yes else "NO"}
    return {"reason": "human label", **answer} if verdict is ReasonedYesNo else answer
