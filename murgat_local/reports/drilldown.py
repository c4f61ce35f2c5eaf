"""The report's per-response drill-down, as HTML built from escaped text only.

Every value from the input is passed through `esc` (html.escape with quotes, lone surrogates
replaced, control and bidi characters shown as escapes, very long values cut); numbers that go
into attributes are formatted from floats. Nothing from the input becomes markup or script.

It draws `ScoreRecord`s as `results.read_score_records` reads them: a line that is not a valid
record (a hand-edited time that is text, a fact that is a list) never reaches it, but is listed
with its line and the fields at fault among the notes on the inputs (see `scan`). What a valid
record may still hold that cannot be drawn (a number that is not finite, a negative time, an
`alone` key that names no citation, a yes/no verdict whose value is neither) is shown as missing
and listed in the response's notes.
"""

from __future__ import annotations

import html
import os
import pathlib
import re
from urllib.parse import quote_from_bytes

from ..inputs.responses import replace_surrogates
from ..results import GenerationRecord, ScoreRecord, Verdict
from ..results.fields import Number
from ..results.records import CitationRecord, FactRecord, SentenceRecord
from ..text.citations import strip_citations
from .rundata import Cell, finite, what
from .scan import citation_verdict, sentences_of

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


def _time(v: Number | None) -> str | None:
    v = finite(v)
    return None if v is None or v < 0 else repr(v)


def _finite_or_note(notes: list[str], where: str, v: Number | None) -> None:
    """A note when a recorded number (valid JSON, so a record) is not a finite one: shown as -."""
    if v is not None and finite(v) is None:
        notes.append(f"{where} is {what(v)}, not a finite number")


def _yes_no(v: Verdict | None, where: str, notes: list[str]) -> Verdict | None:
    """`v`, after a note when its value is neither true, false nor null (the schema leaves a
    verdict's value open: a decomposition's is its facts; a yes/no stage's must be a bool)."""
    if v is not None and v.value is not None and not isinstance(v.value, bool):
        notes.append(f"{where} value is {what(v.value)}, not true or false")
    return v


def _verdict(v: Verdict | None) -> str:
    """A recorded verdict as a short mark."""
    if v is None:
        return '<span class="v-none">no verdict</span>'
    if v.value is True:
        return '<span class="v-yes">YES</span>'
    if v.value is False:
        return '<span class="v-no">NO</span>'
    return f'<span class="v-none">{esc(v.unparsed or v.error or "unparsed")}</span>'


def _reached(v: Verdict) -> str:
    """What reached the judge: its prompt tokens per media modality, or why they are unknown."""
    if "reached" not in v.model_fields_set:  # not recorded at all (an older judge): no line
        return ""
    if v.reached is not None:
        counts = (
            " · ".join(f"{esc(m)} {esc(n)}" for m, n in v.reached.items())
            or "no media placeholders known"
        )
        text = f"tokens reached: {counts}"
    else:
        text = f"tokens reached: not counted ({esc(v.reached_unknown or 'no reason recorded')})"
    return f'<div class="reached">{text}</div>'


def _raw(label: str, v: Verdict | None) -> str:
    if v is None or v.raw is None:
        return ""
    error = f'<div class="error">{esc(v.error)}</div>' if v.error else ""
    return (
        f'<div class="raw"><span class="raw-label">{esc(label)}</span>{error}{_reached(v)}'
        f"<pre>{esc(v.raw)}</pre></div>"
    )


def video_source(
    media_root: pathlib.Path | None, video: str | None, out_dir: pathlib.Path, relative: bool
) -> tuple[str | None, str | None]:
    """(src, None) for a playable video under the media root, or (None, why not)."""
    if media_root is None:
        return None, None
    if not video:
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


def _citation(
    c: CitationRecord,
    i: int,
    facts: list[FactRecord],
    ordinal: str,
    where: str,
    notes: list[str],
) -> str:
    verdict = citation_verdict(c, i, facts)
    start, end = _time(c.start), _time(c.end)
    for key, value, t in (("start", c.start, start), ("end", c.end, end)):
        if value is not None and t is None:
            notes.append(
                f"{where}: {key} is {what(value)}, not a time in seconds"
                + (": the citation cannot seek" if key == "start" else "")
            )
    attrs = f' data-verdict="{verdict}"'
    if start is not None:
        attrs += f' data-start="{start}" data-end="{end if end is not None else start}" tabindex="0" role="button"'
    title = VERDICT_TEXT.get(verdict, verdict)  # our own table of labels, not a record
    if c.issue:
        title += f" ({c.issue})"
    return (
        f'<span class="cite v-{verdict}"{attrs} title="{esc(title)}" data-ordinal="{ordinal}">'
        f"{esc(c.raw or '(citation)')}</span>"
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


def _fact(f: FactRecord, n_cits: int, where: str, notes: list[str]) -> str:
    precise = f.precise or []
    _finite_or_note(notes, f"{where}: precision", f.precision)
    _finite_or_note(notes, f"{where}: recall", f.recall)
    marks = " ".join(
        f'<span class="mark {"v-yes" if p is True else "v-no" if p is False else "v-none"}" '
        f'title="citation {k + 1}: {"needed" if p is True else "not needed" if p is False else "unknown"}">'
        f"c{k + 1}{'✓' if p is True else '✗' if p is False else '?'}</span>"
        for k, p in enumerate(precise)
    )
    joint = _yes_no(f.joint, f"{where}: joint", notes)
    raws = _raw("joint entailment", joint)
    for kind, by_citation in (("alone", f.alone), ("without", f.without)):
        for k, v in (by_citation or {}).items():
            i = _citation_number(k, n_cits, f"{where}: {kind}", notes)
            label = f"citation {i + 1} {kind}" if i is not None else f"{kind} {printable(k, 40)!r}"
            raws += _raw(label, _yes_no(v, f"{where}: {label}", notes))
    unscored = f'<span class="unscored">unscored: {esc(f.unscored)}</span>' if f.unscored else ""
    return (
        f'<li class="fact"><span class="fact-text">{esc(f.text)}</span> '
        f"entailed: {_verdict(joint)} · precision {num(f.precision, 2)} · "
        f"recall {num(f.recall, 2)} {marks} {unscored}"
        f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>'
    )


def _sentence(s: SentenceRecord, number: int, notes: list[str]) -> str:
    where = f"sentence {number}"
    facts = s.facts or []
    cits = s.citations or []
    chips = " ".join(
        _citation(c, i, facts, str(i + 1), f"{where}, citation {i + 1}", notes)
        for i, c in enumerate(cits)
    )
    ver = _yes_no(s.verifiable, f"{where}: verifiable", notes)
    cls = "verifiable" if ver is not None and ver.value is True else "plain"
    raws = _raw("verifiable", ver) + _raw("decomposition", s.decomposition)
    unscored = f'<div class="unscored">unscored: {esc(s.unscored)}</div>' if s.unscored else ""
    plain = strip_citations(s.text) if s.text is not None else None
    judged_html = (
        f'<div class="judged">judged as: {esc(s.judged_text)}</div>'
        if s.judged_text is not None and s.judged_text.strip() != (plain or "").strip()
        else ""
    )
    facts_html = "".join(
        _fact(f, len(cits), f"{where}, fact {k}", notes) for k, f in enumerate(facts, start=1)
    )
    return (
        f'<li class="sentence {cls}" value="{number}"><div class="stext">{esc(s.text)}</div>'
        f'<div class="cites">verifiable: {_verdict(ver)} {chips}</div>{judged_html}{unscored}'
        f"{'<ol class=facts>' + facts_html + '</ol>' if facts_html else ''}"
        f'<details class="raws"><summary>judge outputs</summary>{raws or "none"}</details></li>'
    )


def response(
    record: ScoreRecord,
    gen: GenerationRecord | None,
    cell: Cell,
    n: int,
    src: str | None,
    why: str | None,
) -> str:
    """One response's drill-down: `gen` is its generation row, when one was found."""
    notes: list[str] = []
    for key, value in (
        ("murgat_s", record.murgat_s),
        ("coverage", record.coverage),
        ("precision", record.precision),
        ("recall", record.recall),
        ("f1", record.f1),
    ):
        _finite_or_note(notes, key, value)
    sentences = "".join(_sentence(s, k, notes) for k, s in enumerate(sentences_of(record), start=1))
    correct = record.correct
    mark = "✓" if correct is True else "✗" if correct is False else "–"
    flag = (
        f' · <span class="error">{len(notes)} malformed value{"s" if len(notes) != 1 else ""}</span>'
        if notes
        else ""
    )
    status = record.status
    head = (
        f'<summary><span class="rid">{esc(record.id)}</span> · {esc(cell.label)} · '
        f'<span class="status-{esc(status)}">{esc(status)}</span> · MURGAT-S {num(record.murgat_s)} · '
        f"coverage {num(record.coverage)} · F1 {num(record.f1)} · correct {mark}{flag}</summary>"
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
    if gen is not None and gen.question:
        body.append(f'<div class="question"><b>Question:</b> {esc(gen.question)}</div>')
    answer = f" · gold {esc(gen.gold)} · predicted {esc(gen.predicted)}" if gen is not None else ""
    heard = ""
    if gen is not None and gen.media is not None:
        heard = f" · heard audio: {esc(gen.media.heard_audio)}"
    body.append(
        f'<div class="meta">video {esc(record.video)} · {esc(record.source)}{answer}{heard}</div>'
    )
    if record.error:
        body.append(f'<div class="error">error: {esc(record.error)}</div>')
    if sentences:
        body.append(f'<ol class="sentences">{sentences}</ol>')
    elif status == "ok":
        body.append('<div class="note">no sentences recorded</div>')
    return f'<details class="response" id="resp-{n}">{head}{"".join(body)}</details>'
