"""How the attached evidence of a call is named in its prompt ("video frames from 0:04-0:09")."""

from __future__ import annotations

from typing import Sequence

from ..text.citations import Citation


def _fmt(t: float) -> str:
    """Seconds as M:SS or H:MM:SS, with decimals only when the time has them."""
    whole = int(t)
    frac = round(t - whole, 3)
    h, rem = divmod(whole, 3600)
    m, sec = divmod(rem, 60)
    tail = f"{sec:02d}" + (f"{frac:.3f}".lstrip("0").rstrip("0") if frac else "")
    return f"{h}:{m:02d}:{tail}" if h else f"{m}:{tail}"


def describe_evidence(citations: Sequence[Citation]) -> str:
    parts = []
    for c in citations:
        when = _fmt(c.start) if c.is_point else f"{_fmt(c.start)}-{_fmt(c.end)}"
        if c.modality == "visual":
            what = "a video frame at" if c.is_point else "video frames from"
        else:
            what = "audio from"
        parts.append(f"{what} {when}")
    return "; ".join(parts) + " (attached, in this order)"
