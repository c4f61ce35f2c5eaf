"""How the attached evidence of a call is named in its prompt ("video frames from 0:04-0:09")."""

from __future__ import annotations

from collections.abc import Sequence

from ..text.citations import Citation, format_time


def describe_evidence(citations: Sequence[Citation]) -> str:
    parts = []
    for c in citations:
        start, end = c.times
        when = format_time(start) if c.is_point else f"{format_time(start)}-{format_time(end)}"
        if c.modality == "visual":
            what = "a video frame at" if c.is_point else "video frames from"
        else:
            what = "audio from"
        parts.append(f"{what} {when}")
    return "; ".join(parts) + " (attached, in this order)"
