"""The report's per-response drill-down, as HTML built from escaped text only.

Every value from the input is passed through `esc` (html.escape with quotes, lone surrogates
replaced, control and bidi characters shown as escapes, very long values cut); numbers that go
into attributes are formatted from floats. Nothing from the input becomes markup or script.

A value of the wrong kind (a hand-edited record: a time that is text, a fact that is a list, an
`alone` key that names no citation) is shown as missing and listed in the response's notes.
"""

from __future__ import annotations

import html
import os
import pathlib
import re
from urllib.parse import quote_from_bytes

from ..inputs.responses import replace_surrogates
from ..text.citations import strip_citations
from .rundata import Cell, expect, finite, what
from .scan import citation_verdict

TEXT_LIMIT = 20_000
# C0 and C1 controls but tab and newline, line/paragraph separators, bidi marks and overrides.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
VERDICT_TEXT = {
    "supported": "supports a fact",
    "unsupported": "supports no fact",
    "unjudged": "not judged",
    "malformed": "unusable: malformed",
    "out_of_range": "unusable: out of range",
    "silent_audio": "unusable: audio on a silent video",
    "no_stream": "unusable: no such stream",
}


def printable(value, limit: int = TEXT_LIMIT) -> str:
    """Any value as text that shows what it is: cut when very long, lone surrogates replaced,
    control and bidi characters shown as escapes."""
    s = value if isinstance(value, str) else ("" if value is None else str(value))
    if len(s) > limit:
        s = s[:limit] + f"… [{len(s) - limit} more characters cut]"
    s, _ = replace_surrogates(s)
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


def esc(value, limit: int = TEXT_LIMIT) -> str:
    """Any value as HTML text (also safe inside a quoted attribute)."""
    return html.escape(printable(value, limit), quote=True)


def num(v, digits: int = 3) -> str:
    v = finite(v)
    return "-" if v is None else f"{v:.{digits}f}"


def _time(v) -> str | None:
    v = finite(v)
    return None if v is None or v < 0 else repr(v)


def _checked_verdict(v, where: str, notes: list[str], yes_no: bool = True):
    """A recorded verdict {raw, value} if it is one (else None, with a note); a yes/no verdict's
    value is true or false (a decomposition's is its facts)."""
    if not expect(notes, where, v, lambda x: isinstance(x, dict), "a verdict"):
        return None
    if v is not None and yes_no:
        expect(
            notes, f"{where} value", v.get("value"), lambda x: isinstance(x, bool), "true or false"
        )
    return v


def _verdict(v) -> str:
    """A recorded verdict {raw, value} as a short mark."""
    if not isinstance(v, dict):
        return '<span class="v-none">no verdict</span>'
    value = v.get("value")
    if value is True:
        return '<span class="v-yes">YES</span>'
    if value is False:
        return '<span class="v-no">NO</span>'
    return f'<span class="v-none">{esc(v.get("unparsed") or v.get("error") or "unparsed")}</span>'


def _reached(v: dict) -> str:
    """What reached the judge: its prompt tokens per media modality, or why they are unknown."""
    if "reached" not in v:
        return ""
    reached = v.get("reached")
    if isinstance(reached, dict):
        counts = (
            " · ".join(f"{esc(m)} {esc(n)}" for m, n in reached.items())
            or "no media placeholders known"
        )
        text = f"tokens reached: {counts}"
    else:
        text = (
            f"tokens reached: not counted ({esc(v.get('reached_unknown') or 'no reason recorded')})"
        )
    return f'<div class="reached">{text}</div>'


def _raw(label: str, v) -> str:
    if not isinstance(v, dict) or v.get("raw") is None:
        return ""
    error = f'<div class="error">{esc(v.get("error"))}</div>' if v.get("error") else ""
    return (
        f'<div class="raw"><span class="raw-label">{esc(label)}</span>{error}{_reached(v)}'
        f"<pre>{esc(v.get('raw'))}</pre></div>"
    )


def video_source(
    media_root: pathlib.Path | None, video, out_dir: pathlib.Path, relative: bool
) -> tuple[str | None, str | None]:
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
    except ValueError as e:  # a name the file system cannot spell (a lone surrogate)
        return None, f"video {printable(video, 200)!r} cannot be looked up ({e.__class__.__name__})"
    if relative:
        # a URL path, not a file path: '#', '?', '%' and a first folder named like 'https:host'
        # would otherwise end it, start a query, or make it another scheme
        return quote_from_bytes(os.fsencode(os.path.relpath(path, out_dir.resolve()))), None
    return path.as_uri(), None


def _citation(c: dict, i: int, facts: list, ordinal: str, where: str, notes: list[str]) -> str:
    verdict = citation_verdict(c, i, facts)
    start, end = _time(c.get("start")), _time(c.get("end"))
    for key, t in (("start", start), ("end", end)):
        if c.get(key) is not None and t is None:
            notes.append(
                f"{where}: {key} is {what(c.get(key))}, not a time in seconds"
                + (": the citation cannot seek" if key == "start" else "")
            )
    attrs = f' data-verdict="{verdict}"'
    if start is not None:
        attrs += f' data-start="{start}" data-end="{end if end is not None else start}" tabindex="0" role="button"'
    title = VERDICT_TEXT.get(verdict, verdict)
    if c.get("issue"):
        title += f" ({c.get('issue')})"
    return (
        f'<span class="cite v-{verdict}"{attrs} title="{esc(title)}" data-ordinal="{ordinal}">'
        f"{esc(c.get('raw') or '(citation)')}</span>"
    )


def _citation_number(key: str, n: int, where: str, notes: list[str]) -> int | None:
    """The citation an `alone`/`without` key names (0-based), if it names one of the `n`."""
    # ASCII digits only: '²' is a digit to str.isdigit() but not to int()
    if not re.fullmatch(r"[0-9]{1,9}", key):
        notes.append(f"{where} key {printable(key, 40)!r} is not a citation number")
        return None
    if int(key) >= n:
        notes.append(f"{where} key {key!r} names no citation of the sentence (it has {n})")
    return int(key)


def _fact(f: dict, cits: list[dict], where: str, notes: list[str]) -> str:
    precise = f.get("precise")
    if not expect(notes, f"{where}: precise", precise, lambda v: isinstance(v, list), "a list"):
        precise = []
    precise = precise or []
    for k, p in enumerate(precise):
        expect(
            notes, f"{where}: precise {k + 1}", p, lambda v: isinstance(v, bool), "true or false"
        )
    for key in ("precision", "recall"):
        expect(notes, f"{where}: {key}", f.get(key), lambda v: finite(v) is not None, "a number")
    marks = " ".join(
        f'<span class="mark {"v-yes" if p is True else "v-no" if p is False else "v-none"}" '
        f'title="citation {k + 1}: {"needed" if p is True else "not needed" if p is False else "unknown"}">'
        f"c{k + 1}{'✓' if p is True else '✗' if p is False else '?'}</span>"
        for k, p in enumerate(precise)
    )
    joint = _checked_verdict(f.get("joint"), f"{where}: joint", notes)
    raws = _raw("joint entailment", joint)
    for kind in ("alone", "without"):
        d = f.get(kind)
        if not expect(notes, f"{where}: {kind}", d, lambda v: isinstance(v, dict), "an object"):
            continue
        for k, v in (d or {}).items():
            i = _citation_number(k, len(cits), f"{where}: {kind}", notes)
            label = f"citation {i + 1} {kind}" if i is not None else f"{kind} {printable(k, 40)!r}"
            raws += _raw(label, _checked_verdict(v, f"{where}: {label}", notes))
    unscored = (
        f'<span class="unscored">unscored: {esc(f.get("unscored"))}</span>'
        if f.get("unscored")
        else ""
    )
    return (
        f'<li class="fact"><span class="fact-text">{esc(f.get("text"))}</span> '
        f"entailed: {_verdict(joint)} · precision {num(f.get('precision'), 2)} · "
        f"recall {num(f.get('recall'), 2)} {marks} {unscored}"
        f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>'
    )


def _objects(items, where: str, item: str, notes: list[str]) -> list[tuple[int, dict | None]]:
    """(number from 1, the item if it is an object, else None with a note) for a list at `where`."""
    if not expect(notes, where, items, lambda v: isinstance(v, list), "a list") or not items:
        return []
    out = []
    for k, x in enumerate(items, start=1):
        if not isinstance(x, dict):
            notes.append(f"{item} {k} is {what(x)}, not an object")
        out.append((k, x if isinstance(x, dict) else None))
    return out


def _sentence(s: dict, number: int, notes: list[str]) -> str:
    where = f"sentence {number}"
    facts = [
        (k, f) for k, f in _objects(s.get("facts"), f"{where}: facts", f"{where}, fact", notes) if f
    ]
    # a citation that is not an object keeps its place (the facts' `precise` lists count it) as a malformed chip
    cits = [
        c or {}
        for _, c in _objects(s.get("citations"), f"{where}: citations", f"{where}, citation", notes)
    ]
    fact_dicts = [f for _, f in facts]
    chips = " ".join(
        _citation(c, i, fact_dicts, str(i + 1), f"{where}, citation {i + 1}", notes)
        for i, c in enumerate(cits)
    )
    ver = _checked_verdict(s.get("verifiable"), f"{where}: verifiable", notes)
    decomposition = _checked_verdict(
        s.get("decomposition"), f"{where}: decomposition", notes, yes_no=False
    )
    cls = "verifiable" if isinstance(ver, dict) and ver.get("value") is True else "plain"
    raws = _raw("verifiable", ver) + _raw("decomposition", decomposition)
    unscored = (
        f'<div class="unscored">unscored: {esc(s.get("unscored"))}</div>'
        if s.get("unscored")
        else ""
    )
    judged = s.get("judged_text")
    text = s.get("text")
    plain = strip_citations(text) if isinstance(text, str) else None
    judged_html = (
        f'<div class="judged">judged as: {esc(judged)}</div>'
        if isinstance(judged, str) and judged.strip() != (plain or "").strip()
        else ""
    )
    facts_html = "".join(_fact(f, cits, f"{where}, fact {k}", notes) for k, f in facts)
    return (
        f'<li class="sentence {cls}" value="{number}"><div class="stext">{esc(text)}</div>'
        f'<div class="cites">verifiable: {_verdict(ver)} {chips}</div>{judged_html}{unscored}'
        f"{'<ol class=facts>' + facts_html + '</ol>' if facts_html else ''}"
        f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>'
    )


def _sentences(record: dict, notes: list[str]) -> list[tuple[int, dict]]:
    trace = record.get("trace")
    if (
        not expect(
            notes, "trace", trace, lambda v: isinstance(v, dict), "an object: no sentences shown"
        )
        or not trace
    ):
        return []
    return [
        (k, s)
        for k, s in _objects(trace.get("sentences"), "trace.sentences", "sentence", notes)
        if s is not None
    ]


def response(record: dict, cell: Cell, n: int, src: str | None, why: str | None) -> str:
    notes: list[str] = []
    generation = record.get("_generation")
    gen = generation if isinstance(generation, dict) else {}
    status = record.get("status")
    correct = record.get("correct")
    for key in ("murgat_s", "coverage", "precision", "recall", "f1"):
        expect(notes, key, record.get(key), lambda v: finite(v) is not None, "a number")
    expect(notes, "correct", correct, lambda v: isinstance(v, bool), "true or false")
    expect(notes, "status", status, lambda v: isinstance(v, str), "a status")
    expect(
        notes,
        "generation row's media",
        gen.get("media"),
        lambda v: isinstance(v, dict),
        "an object",
    )
    sentences = "".join(_sentence(s, k, notes) for k, s in _sentences(record, notes))
    mark = "✓" if correct is True else "✗" if correct is False else "–"
    flag = (
        f' · <span class="error">{len(notes)} malformed value{"s" if len(notes) != 1 else ""}</span>'
        if notes
        else ""
    )
    head = (
        f'<summary><span class="rid">{esc(record.get("id"))}</span> · {esc(cell.label)} · '
        f'<span class="status-{esc(status)}">{esc(status)}</span> · MURGAT-S {num(record.get("murgat_s"))} · '
        f"coverage {num(record.get('coverage'))} · F1 {num(record.get('f1'))} · correct {mark}{flag}</summary>"
    )
    body = []
    if notes:
        body.append(
            '<ul class="data-notes">' + "".join(f"<li>{esc(x)}</li>" for x in notes) + "</ul>"
        )
    if src is not None:
        body.append(
            f'<div class="player"><video controls preload="none" src="{esc(src)}"></video>'
            f'<output class="now">click a citation to play its span</output></div>'
        )
    elif why:
        body.append(f'<div class="novideo">no player: {esc(why)}</div>')
    if gen.get("question"):
        body.append(f'<div class="question"><b>Question:</b> {esc(gen.get("question"))}</div>')
    body.append(
        f'<div class="meta">video {esc(record.get("video"))} · {esc(record.get("source"))}'
        f"{' · gold ' + esc(gen.get('gold')) + ' · predicted ' + esc(gen.get('predicted')) if gen else ''}"
        f"{' · heard audio: ' + esc((gen.get('media') or {}).get('heard_audio')) if isinstance(gen.get('media'), dict) else ''}</div>"
    )
    if record.get("error"):
        body.append(f'<div class="error">error: {esc(record.get("error"))}</div>')
    if sentences:
        body.append(f'<ol class="sentences">{sentences}</ol>')
    elif status == "ok":
        body.append('<div class="note">no sentences recorded</div>')
    return f'<details class="response" id="resp-{n}">{head}{"".join(body)}</details>'
