"""The report's per-response drill-down, as HTML built from escaped text only.

Every value from the input is passed through `esc` (html.escape with quotes, lone surrogates
replaced, control and bidi characters shown as escapes, very long values cut); numbers that go
into attributes are formatted from floats. Nothing from the input becomes markup or script.
"""

from __future__ import annotations

import html
import math
import os
import pathlib
import re

from ..inputs.responses import replace_surrogates
from ..text.citations import strip_citations
from .rundata import Cell, citation_verdict, citations_of, sentences_of

TEXT_LIMIT = 20_000
# C0 and C1 controls but tab and newline, line/paragraph separators, bidi marks and overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
VERDICT_TEXT = {
    "supported": "supports a fact",
    "unsupported": "supports no fact",
    "unjudged": "not judged",
    "malformed": "unusable: malformed",
    "out_of_range": "unusable: out of range",
    "silent_audio": "unusable: audio on a silent video",
    "no_stream": "unusable: no such stream",
}


def esc(value, limit: int = TEXT_LIMIT) -> str:
    """Any value as HTML text (also safe inside a quoted attribute)."""
    s = value if isinstance(value, str) else ("" if value is None else str(value))
    if len(s) > limit:
        s = s[:limit] + f"… [{len(s) - limit} more characters cut]"
    s, _ = replace_surrogates(s)
    s = _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)
    return html.escape(s, quote=True)


def num(v, digits: int = 3) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "-"
    return f"{v:.{digits}f}"


def _time(v) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None
    return repr(float(v))


def _verdict(v) -> str:
    """A recorded verdict {raw, value} as a short mark."""
    if not isinstance(v, dict):
        return '<span class="v-none">no verdict</span>'
    value = v.get("value")
    if value is True:
        return '<span class="v-yes">YES</span>'
    if value is False:
        return '<span class="v-no">NO</span>'
    return f'<span class="v-none">{esc(v.get("unparsed") or "unparsed")}</span>'


def _raw(label: str, v) -> str:
    if not isinstance(v, dict) or v.get("raw") is None:
        return ""
    return f'<div class="raw"><span class="raw-label">{esc(label)}</span><pre>{esc(v.get("raw"))}</pre></div>'


def video_source(media_root: pathlib.Path | None, video, out_dir: pathlib.Path, relative: bool) -> tuple[str | None, str | None]:
    """(src, None) for a playable video under the media root, or (None, why not)."""
    if media_root is None:
        return None, None
    if not isinstance(video, str) or not video:
        return None, "no video named"
    from ..media.source import MediaError, resolve_video

    try:
        path = resolve_video(media_root, video)
    except MediaError as e:
        return None, str(e)
    if relative:
        return pathlib.PurePosixPath(os.path.relpath(path, out_dir.resolve())).as_posix(), None
    return path.as_uri(), None


def _citation(c: dict, i: int, facts: list, ordinal: str) -> str:
    verdict = citation_verdict(c, i, facts)
    start, end = _time(c.get("start")), _time(c.get("end"))
    attrs = f' data-verdict="{verdict}"'
    if start is not None:
        attrs += f' data-start="{start}" data-end="{end if end is not None else start}" tabindex="0" role="button"'
    title = VERDICT_TEXT.get(verdict, verdict)
    if c.get("issue"):
        title += f" ({c.get('issue')})"
    return (f'<span class="cite v-{verdict}"{attrs} title="{esc(title)}" data-ordinal="{ordinal}">'
            f'{esc(c.get("raw") or "(citation)")}</span>')


def _fact(f: dict, cits: list[dict]) -> str:
    precise = f.get("precise") if isinstance(f.get("precise"), list) else []
    marks = " ".join(
        f'<span class="mark {"v-yes" if p is True else "v-no" if p is False else "v-none"}" '
        f'title="citation {k + 1}: {"needed" if p is True else "not needed" if p is False else "unknown"}">'
        f'c{k + 1}{"✓" if p is True else "✗" if p is False else "?"}</span>'
        for k, p in enumerate(precise))
    raws = _raw("joint entailment", f.get("joint"))
    for kind in ("alone", "without"):
        d = f.get(kind) if isinstance(f.get(kind), dict) else {}
        for k, v in d.items():
            n = int(k) + 1 if str(k).isdigit() else esc(k)
            raws += _raw(f"citation {n} {kind}", v)
    unscored = f'<span class="unscored">unscored: {esc(f.get("unscored"))}</span>' if f.get("unscored") else ""
    return (f'<li class="fact"><span class="fact-text">{esc(f.get("text"))}</span> '
            f'entailed: {_verdict(f.get("joint"))} · precision {num(f.get("precision"), 2)} · '
            f'recall {num(f.get("recall"), 2)} {marks} {unscored}'
            f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>')


def _sentence(s: dict) -> str:
    facts = [f for f in s.get("facts") or [] if isinstance(f, dict)] if isinstance(s.get("facts"), list) else []
    cits = citations_of(s)
    chips = " ".join(_citation(c, i, facts, str(i + 1)) for i, c in enumerate(cits))
    ver = s.get("verifiable")
    cls = "verifiable" if isinstance(ver, dict) and ver.get("value") is True else "plain"
    raws = _raw("verifiable", ver) + _raw("decomposition", s.get("decomposition"))
    unscored = f'<div class="unscored">unscored: {esc(s.get("unscored"))}</div>' if s.get("unscored") else ""
    judged = s.get("judged_text")
    text = s.get("text")
    plain = strip_citations(text) if isinstance(text, str) else None
    judged_html = (f'<div class="judged">judged as: {esc(judged)}</div>'
                   if isinstance(judged, str) and judged.strip() != (plain or "").strip() else "")
    facts_html = "".join(_fact(f, cits) for f in facts)
    return (f'<li class="sentence {cls}"><div class="stext">{esc(text)}</div>'
            f'<div class="cites">verifiable: {_verdict(ver)} {chips}</div>{judged_html}{unscored}'
            f'{"<ol class=facts>" + facts_html + "</ol>" if facts_html else ""}'
            f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>')


def response(record: dict, cell: Cell, n: int, src: str | None, why: str | None) -> str:
    gen = record.get("_generation") if isinstance(record.get("_generation"), dict) else {}
    status = record.get("status")
    correct = record.get("correct")
    mark = "✓" if correct is True else "✗" if correct is False else "–"
    head = (f'<summary><span class="rid">{esc(record.get("id"))}</span> · {esc(cell.label)} · '
            f'<span class="status-{esc(status)}">{esc(status)}</span> · MURGAT-S {num(record.get("murgat_s"))} · '
            f'coverage {num(record.get("coverage"))} · F1 {num(record.get("f1"))} · correct {mark}</summary>')
    body = []
    if src is not None:
        body.append(f'<div class="player"><video controls preload="none" src="{esc(src)}"></video>'
                    f'<output class="now">click a citation to play its span</output></div>')
    elif why:
        body.append(f'<div class="novideo">no player: {esc(why)}</div>')
    if gen.get("question"):
        body.append(f'<div class="question"><b>Question:</b> {esc(gen.get("question"))}</div>')
    body.append(f'<div class="meta">video {esc(record.get("video"))} · {esc(record.get("source"))}'
                f'{" · gold " + esc(gen.get("gold")) + " · predicted " + esc(gen.get("predicted")) if gen else ""}'
                f'{" · heard audio: " + esc((gen.get("media") or {}).get("heard_audio")) if isinstance(gen.get("media"), dict) else ""}</div>')
    if record.get("error"):
        body.append(f'<div class="error">error: {esc(record.get("error"))}</div>')
    sents = sentences_of(record)
    if sents:
        body.append('<ol class="sentences">' + "".join(_sentence(s) for s in sents) + "</ol>")
    elif status == "ok":
        body.append('<div class="note">no sentences recorded</div>')
    return f'<details class="response" id="resp-{n}">{head}{"".join(body)}</details>'
