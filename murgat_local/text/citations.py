"""Citation parsing: `(visual, 0:20)`, `(audio, 1:20-1:30)`, `(visual, 0:02; audio, 0:16-0:19)`.

Two grammars live here. `parse_citations` is the project's own (default mode): any letter case
for the modality, `H:MM:SS` and decimal seconds, spaces around the dash, en/em dashes, square
brackets as well as parentheses, and a reason attached to every citation it cannot use. It also
reads two forms whose meaning is clear: two modalities at once (`(visual & audio, 0:02)`: one
citation per modality) and seconds with a unit (`(visual, 12s-14s)`, `(audio, 2.5s)`). What
looks like a citation and is still not read as one (a modality word, with or without a time,
inside brackets: `(visual, around the end)`) is listed by `unparsed_citations`, so that a
sentence counted as uncited says why.
`parse_citations_reference` reproduces the public MURGAT reference's behaviour for
`--compat reference`: `M:SS` only, a plain hyphen, and any word accepted as a modality.

Both are linear in the length of the text: no pattern here can retry every split of a run of
spaces, nor rescan the rest of the text from each unclosed parenthesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VISUAL = "visual"
AUDIO = "audio"
MODALITIES = (VISUAL, AUDIO)


@dataclass(frozen=True)
class Citation:
    """One cited segment. `error` is set when the citation cannot be checked against media."""

    modality: str
    start: float | None
    end: float | None
    raw: str
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def is_point(self) -> bool:
        return self.start is not None and self.start == self.end

    @property
    def times(self) -> tuple[float, float]:
        """(start, end) in seconds, of a citation that has both (a valid one does)."""
        if self.start is None or self.end is None:
            raise ValueError(f"citation {self.raw!r} has no times ({self.error})")
        return self.start, self.end

    def key(self) -> str:
        """A stable, human-readable identity used in traces and cache keys."""
        return self.raw

    def to_dict(self) -> dict:
        return {
            "raw": self.raw,
            "modality": self.modality,
            "start": self.start,
            "end": self.end,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Citation:
        return cls(d["modality"], d.get("start"), d.get("end"), d["raw"], d.get("error"))


# ---------------------------------------------------------------- default grammar

_CLOCK = r"\d{1,3}(?::\d{1,2}){1,2}(?:\.\d+)?"
# Seconds with their unit: "12s", "2.5 s", "14 sec", "3 seconds".
_SECONDS = r"\d{1,5}(?:\.\d+)?\s?(?:seconds|second|secs|sec|s)\b"
_TIME = rf"(?:{_CLOCK}|{_SECONDS})"
_SECONDS_ONLY = re.compile(r"(\d{1,5}(?:\.\d+)?)\s?(?:seconds|second|secs|sec|s)")
_DASH = r"\s*(?:-|–|—|~|to)\s*"
# One modality word, or two joined by "&", "and", "/" or "+" ("visual & audio").
_MODS = r"[A-Za-z]+(?:\s*(?:&|\+|/|\band\b)\s*[A-Za-z]+)?"
# `(?=(?P<gap>X))(?P=gap)` is an atomic X (never given back): the time that follows starts
# with a digit, which X cannot have taken, so it matches what a plain X would. A bare number
# starts a range only when the range ends in seconds with their unit ("12-14s").
_ENTRY = re.compile(
    rf"^\s*(?P<mod>{_MODS})(?=(?P<gap>\s*(?P<sep>[,:]?)\s*))(?P=gap)"
    rf"(?:(?P<start>{_TIME})(?:{_DASH}(?P<end>{_TIME}))?"
    rf"|(?P<bare>\d{{1,5}}(?:\.\d+)?){_DASH}(?P<bare_end>{_SECONDS}))\s*$"
)
_JOIN = re.compile(r"\s*(?:&|\+|/|\band\b)\s*")
# Looser: something that is shaped like a citation but has a malformed time ("visual, 1:2:3:4"):
# a modality, a comma, and then only digits, colons, dots, dashes and spaces (`_LOOSE_TIME`).
_ENTRY_LOOSE = re.compile(r"^\s*(?P<mod>[A-Za-z]+)\s*,(?P<time>.*)", re.DOTALL)
_LOOSE_TIME = re.compile(r"[\d:.\s\-–—]+")
# What looks like a citation: a modality word (or two joined) alone, or followed by a comma, a
# colon or a digit. `(visual, around the end)`, `(audio)`, `(visual 1:2:3:4)`; not
# `(sound familiar?)` nor `(see the video)`.
_CITATION_LIKE = re.compile(rf"^\s*(?P<mod>{_MODS})\s*(?:$|[,:\d])")
GROUP = re.compile(r"\((?P<p>[^()]*)\)|\[(?P<b>[^\[\]]*)\]|（(?P<f>[^（）]*)）")


def group_body(m: re.Match) -> str:
    """The text inside a bracketed group matched by `GROUP`."""
    for name in ("p", "b", "f"):
        if m.group(name) is not None:
            return m.group(name)
    return ""


_MODALITY_ALIASES = {
    "visual": VISUAL,
    "vision": VISUAL,
    "video": VISUAL,
    "image": VISUAL,
    "frame": VISUAL,
    "audio": AUDIO,
    "sound": AUDIO,
    "speech": AUDIO,
}


def parse_time(text: str) -> tuple[float | None, str | None]:
    """`M:SS`, `MM:SS.s`, `H:MM:SS`, or seconds with their unit (`12s`, `2.5 sec`) to seconds;
    (None, reason) when malformed."""
    unit = _SECONDS_ONLY.fullmatch(text.strip())
    if unit is not None:
        return float(unit.group(1)), None
    parts = text.strip().split(":")
    if len(parts) not in (2, 3):
        return None, f"timestamp {text!r} is not M:SS or H:MM:SS"
    try:
        seconds = float(parts[-1])
        minutes = int(parts[-2])
        hours = int(parts[0]) if len(parts) == 3 else 0
    except ValueError:
        return None, f"timestamp {text!r} is not numeric"
    if seconds >= 60:
        return None, f"timestamp {text!r} has {seconds:g} seconds (must be below 60)"
    if len(parts) == 3 and minutes >= 60:
        return None, f"timestamp {text!r} has {minutes} minutes (must be below 60)"
    return hours * 3600 + minutes * 60 + seconds, None


def format_time(seconds: float) -> str:
    """Seconds as a citation writes them, `M:SS` or `H:MM:SS`, with up to three decimals only
    when the time has them; `parse_time` reads it back (rounded to the millisecond first, so
    59.9996 is `1:00`, never `0:59.1000`)."""
    ms = max(0, round(seconds * 1000))
    whole, frac = divmod(ms, 1000)
    h, rem = divmod(whole, 3600)
    m, sec = divmod(rem, 60)
    tail = f"{sec:02d}" + (f".{frac:03d}".rstrip("0") if frac else "")
    return f"{h}:{m:02d}:{tail}" if h else f"{m}:{tail}"


def _parse_entry(entry: str) -> list[Citation] | None:
    """The citations one entry of a bracketed group holds (two for "visual & audio, 0:02"), or
    None when it is not one."""
    raw = f"({entry.strip()})"
    m = _ENTRY.match(entry)
    if m is None:
        loose = _ENTRY_LOOSE.match(entry)
        if (
            loose
            and _LOOSE_TIME.fullmatch(loose.group("time"))
            and loose.group("mod").lower() in _MODALITY_ALIASES
        ):
            mod = _MODALITY_ALIASES[loose.group("mod").lower()]
            why = f"malformed timestamp {loose.group('time').strip()!r}"
            return [Citation(mod, None, None, raw, why)]
        return None
    words = _JOIN.split(m.group("mod"))
    if len(words) > 1 and any(w.lower() not in _MODALITY_ALIASES for w in words):
        return None  # "(this and 0:12)": prose
    found = []
    for word in words:
        modality = _MODALITY_ALIASES.get(word.lower())
        if modality is None:
            if m.group("sep") != ",":
                return None  # "(at 0:12)", "(around 1:05)": prose, not a citation
            found.append(Citation(word.lower(), None, None, raw, f"unknown modality {word!r}"))
        else:
            found.append(_timed(modality, m, raw))
    return found


def _timed(modality: str, m: re.Match, raw: str) -> Citation:
    start_text = m.group("start") or m.group("bare")
    end_text = m.group("end") or m.group("bare_end")
    if m.group("bare") is not None:
        start_text = f"{start_text}s"  # "12-14s": the unit of the end is the start's too
    start, err = parse_time(start_text)
    if start is None:
        return Citation(modality, None, None, raw, err)
    end = start
    if end_text:
        parsed_end, err = parse_time(end_text)
        if parsed_end is None:
            return Citation(modality, start, None, raw, err)
        end = parsed_end
    if end < start:
        return Citation(modality, start, end, raw, f"start {start:g}s is after end {end:g}s")
    return Citation(modality, start, end, raw)


def parse_citations(sentence: str) -> list[Citation]:
    """Every citation in a sentence, in order, valid or not (invalid ones carry `error`)."""
    found: list[Citation] = []
    for g in GROUP.finditer(sentence):
        body = group_body(g)
        for entry in body.split(";"):
            found += _parse_entry(entry) or ()
    return found


def unparsed_citations(sentence: str) -> list[str]:
    """The entries of the sentence's bracketed groups that look like a citation (`_CITATION_LIKE`:
    a modality word alone, or before a comma, a colon or a digit) and are not read as one, each
    as `(entry)`, in order."""
    found = []
    for g in GROUP.finditer(sentence):
        for entry in group_body(g).split(";"):
            like = _CITATION_LIKE.match(entry)
            if like is None or _parse_entry(entry) is not None:
                continue
            if any(w.lower() in _MODALITY_ALIASES for w in _JOIN.split(like.group("mod"))):
                found.append(f"({entry.strip()})")
    return found


def is_citation_group(group_text: str) -> bool:
    """True when a bracketed group (without its brackets) holds at least one citation."""
    return any(_parse_entry(e) is not None for e in group_text.split(";"))


def strip_citations(sentence: str) -> str:
    """The sentence without its citation groups (other parentheses kept)."""

    def repl(m: re.Match) -> str:
        body = group_body(m)
        return "" if is_citation_group(body) else m.group(0)

    text = GROUP.sub(repl, sentence)
    text = _SPACE_BEFORE_STOP.sub(r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


# Spaces before punctuation, matched from the first space of a run only: the same matches as
# `\s+([.,;:!?。])`, without rescanning a long run of spaces from each of its spaces.
_SPACE_BEFORE_STOP = re.compile(r"(?<!\s)\s+([.,;:!?。])")


# ---------------------------------------------------------------- reference grammar

_REF_ENTRY = re.compile(r"^\s*([a-zA-Z]+)\s*,\s*(\d+:\d+(?:-\d+:\d+)?)\s*$")
# Spaces and a parenthesis, matched from the first space of a run only (see _SPACE_BEFORE_STOP).
_REF_PARENTHESIS = re.compile(r"(?<!\s)\s*\([^)]+\)")


def _reference_groups(sentence: str):
    r"""The bodies `\((.*?)\)` finds, in order. The next ')' and the next line break are looked
    up once and reused by every '(' before them, instead of being searched for from each
    unclosed '('."""
    none = len(sentence) + 1
    close = newline = -1  # the first ')' / '\n' at or after the last lookup (`none`: there is none)
    i = sentence.find("(")
    while i >= 0:
        body = i + 1
        if close < body:
            close = sentence.find(")", body)
            close = none if close < 0 else close
        if newline < body:
            newline = sentence.find("\n", body)
            newline = none if newline < 0 else newline
        if close < newline:
            yield sentence[body:close]
            i = sentence.find("(", close + 1)
        else:
            i = sentence.find("(", body)


def _ref_time(text: str) -> float:
    try:
        parts = text.strip().split(":")
        if len(parts) == 2:
            return float(parts[0]) * 60 + float(parts[1])
        if len(parts) == 3:
            return float(parts[0]) * 3600 + float(parts[1]) * 60 + float(parts[2])
        return -1.0
    except ValueError:
        return -1.0


def parse_citations_reference(sentence: str) -> list[Citation]:
    """The reference's citation grammar. A start of -1 (unparseable) becomes an invalid citation."""
    found: list[Citation] = []
    for body in _reference_groups(sentence):
        for entry in body.split(";"):
            entry = entry.strip()
            m = _REF_ENTRY.match(entry)
            if not m:
                continue
            modality = m.group(1).lower()
            times = m.group(2)
            if "-" in times:
                a, b = times.split("-", 1)
                start, end = _ref_time(a), _ref_time(b)
            else:
                start = end = _ref_time(times)
            raw = f"({entry})"
            error = "unparseable timestamp" if start == -1 else None
            found.append(Citation(modality, start, end, raw, error))
    return found


def strip_citations_reference(fact: str) -> str:
    """The reference removes every parenthetical from a fact before asking the judge."""
    # Nothing after the last ')' can match: searching it made each unclosed '(' scan to the end.
    cut = fact.rfind(")") + 1
    return (_REF_PARENTHESIS.sub("", fact[:cut]) + fact[cut:]).strip()
