"""What `murgat annotate` asks about: the responses of a SOURCE, split as the scorer splits them.

SOURCE is either a responses file (JSONL or the reference's JSON list) or a `murgat score`
folder. A folder's records hold no video and no generation, so its responses are read again from
the input its `summary.json` names (checked against the SHA-256 recorded there; `responses`
overrides a path that moved), and its records only add the judges' proposals.

Either way each response is split by `text.segment.segment` in the default mode, the one
function `murgat segment` and the scorer use, so a labelled sentence's text is the text
`human:PATH` and `murgat meta-eval` compare against.

A response that cannot be labelled (an unreadable line, a video outside the media root or
missing) is an `Unusable` with its reason; the others are read. A line of the run's scores.jsonl
that its schema refuses proposes nothing: its error is the note of each response left without a
record (`Source.unreadable` keeps them).
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from dataclasses import dataclass, field

from ..inputs.responses import InputError, read_responses
from ..media.source import MediaError, resolve_video
from ..meta.views import ResponseView, from_record
from ..results import ReadError, ScoreRecord, layout, read_score_records, read_summary
from ..results.records import SentenceRecord
from ..text.citations import Citation
from ..text.labels import normalize_ws
from ..text.segment import segment


class SourceError(Exception):
    """A SOURCE that cannot be read at all (a usage error)."""


@dataclass(frozen=True)
class Proposal:
    """What a run's judges said of one sentence."""

    verifiable: bool | None
    facts: tuple[str, ...] | None  # the decomposer's facts (None: not decomposed)
    entailed: tuple[bool | None, ...] = ()  # per judge fact: the joint verdict
    precise: tuple[tuple[bool | None, ...], ...] = ()  # per judge fact, per citation


@dataclass(frozen=True)
class Sentence:
    text: str  # as `murgat segment` prints it, citations included
    claim: str  # without its citations
    citations: tuple[Citation, ...]
    proposal: Proposal | None = None


@dataclass(frozen=True)
class Item:
    index: int  # position in the source
    id: str
    video: str
    media: pathlib.Path  # the resolved file under the media root
    sentences: tuple[Sentence, ...]
    question: str | None = None
    options: object = None
    digest: str = ""  # of what is labelled: answers made on another split are not reused
    note: str | None = None  # why the judges' proposals are missing
    # `--abstained`: only these questions (suffixes), about the run's own facts; None: all.
    ask: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Unusable:
    id: str | None
    source: str
    reason: str


@dataclass
class Source:
    kind: str  # "responses" or "run"
    path: pathlib.Path
    responses: pathlib.Path
    items: list[Item] = field(default_factory=list)
    unusable: list[Unusable] = field(default_factory=list)
    judge: dict[str, ResponseView] = field(default_factory=dict)  # a run's annotations, by id
    unreadable: list[ReadError] = field(default_factory=list)  # a run's refused score lines
    audio_point_window: float = 1.0


def item_digest(rid: str, sentences) -> str:
    payload = json.dumps([rid, [s.text for s in sentences]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _proposal(s: SentenceRecord) -> Proposal:
    verifiable = s.verifiable.yes if s.verifiable is not None else None
    # A sentence the decomposer never reached has no `facts` key (None: not decomposed).
    if "facts" not in s.model_fields_set:
        return Proposal(verifiable, None)
    return Proposal(
        verifiable,
        tuple(f.text for f in s.facts),
        tuple(f.joint.yes if f.joint is not None else None for f in s.facts),
        tuple(tuple(f.precise) for f in s.facts),
    )


def _proposals(
    record: ScoreRecord | None, sentences: tuple, unreadable: list[ReadError]
) -> tuple[tuple[Proposal | None, ...], str | None]:
    """The run record's proposal per sentence, when its sentences are this split's."""
    none = tuple(None for _ in sentences)
    if record is None:
        return none, _no_record(unreadable)
    if (record.mode or "default") != "default":
        return none, "the run judged another split (--compat reference)"
    if record.trace is None:
        return none, f"the run's record has no usable trace (status {record.status!r})"
    judged = record.trace.sentences
    if [normalize_ws(s.text) for s in judged] != [normalize_ws(s.text) for s in sentences]:
        return none, "the run judged other sentences than this split"
    return tuple(_proposal(s) for s in judged), None


def _no_record(unreadable: list[ReadError], most: int = 3) -> str:
    """Why a response has no record: none was written, or (for all we know) its line is one the
    reader refused, each named with its error."""
    if not unreadable:
        return "the run has no record for this response"
    named = [f"{e.path.name}{f' line {e.line}' if e.line else ''}: {e.reason}" for e in unreadable]
    more = f"; and {len(named) - most} more" if len(named) > most else ""
    return f"the run has no readable record for this response ({'; '.join(named[:most])}{more})"


@dataclass(frozen=True)
class _Run:
    responses: pathlib.Path  # the run's input
    records: dict[str, ScoreRecord]  # by response id, the first of each
    unreadable: list[ReadError]  # the lines of scores.jsonl that could not be read
    audio_point_window: float


def _read_run(folder: pathlib.Path, responses: pathlib.Path | None) -> _Run:
    summary_path, scores = folder / layout.SUMMARY, folder / layout.SCORES
    if not scores.is_file() or not summary_path.is_file():
        raise SourceError(
            f"{folder} is not a `murgat score` folder (it needs scores.jsonl and summary.json)"
        )
    read = read_summary(summary_path)
    if isinstance(read, ReadError):
        raise SourceError(f"{read}: the run's input is unknown")
    recorded = read.provenance.input if read.provenance is not None else None
    if recorded is None:
        raise SourceError(f"{summary_path} does not name the run's input (no provenance.input)")
    window = read.option("media", "audio_point_window")
    if responses is None:
        given = pathlib.Path(recorded.path or "")
        candidates = (
            [given] if given.is_absolute() else [given, folder / given, folder.parent / given]
        )
        responses = next((c for c in candidates if c.is_file()), None)
        if responses is None:
            raise SourceError(
                f"the run's input {str(given)!r} is not found; name it with --responses"
            )
    digest = hashlib.sha256(responses.read_bytes()).hexdigest()
    if recorded.sha256 and digest != recorded.sha256:
        raise SourceError(
            f"{responses} is not the file the run scored (its SHA-256 differs from "
            f"summary.json's); name the right one with --responses"
        )
    records: dict[str, ScoreRecord] = {}
    unreadable: list[ReadError] = []
    for record in read_score_records(scores):
        if isinstance(record, ReadError):
            unreadable.append(record)
        elif record.id is not None:
            records.setdefault(str(record.id), record)
    window = float(window) if isinstance(window, (int, float)) else 1.0
    return _Run(responses, records, unreadable, window)


def abstained_questions(record: ScoreRecord) -> tuple[str, ...]:
    """The questions that ask people exactly the verdicts an escalated run abstained on
    (`murgat score --escalate-to`): a sentence's verifiability, a fact's entailment by its
    citations together (joint), a citation's necessity to a fact (alone / without it). Facts
    are the run's own decomposition, numbered as in its record (1-based)."""
    out: list[str] = []
    for i, s in enumerate(record.trace.sentences if record.trace is not None else []):
        if s.verifiable is not None and s.verifiable.abstained:
            out.append(f"s{i + 1}.verifiable")
        for j, f in enumerate(s.facts):
            if f.joint is not None and f.joint.abstained:
                out.append(f"s{i + 1}.f{j + 1}.entailed")
            cited = sorted(
                {
                    int(k)
                    for verdicts in (f.alone, f.without)
                    for k, v in verdicts.items()
                    if v is not None and v.abstained
                }
            )
            out += [f"s{i + 1}.f{j + 1}.c{k + 1}.precise" for k in cited]
    return tuple(out)


def load_source(
    path: pathlib.Path,
    media_root: pathlib.Path,
    *,
    responses: pathlib.Path | None = None,
    abstained: bool = False,
) -> Source:
    """Every response of SOURCE, split and with its video resolved under `media_root`.

    Args:
        path: a responses file or a `murgat score` folder.
        media_root: the folder the videos are named under (nothing outside it is served).
        responses: a run folder's input, when the path its summary records has moved.
        abstained: only the verdicts the run abstained on (`abstained_questions`), and only
            the responses that have one.
    """
    path = pathlib.Path(path)
    root = pathlib.Path(media_root).resolve()
    if not root.is_dir():
        raise SourceError(f"media root {media_root} is not a folder")
    run: _Run | None = None
    if path.is_dir():
        run = _read_run(path, responses)
        source = Source("run", path, run.responses, audio_point_window=run.audio_point_window)
        source.unreadable = run.unreadable
    elif path.is_file():
        source = Source("responses", path, path)
    else:
        raise SourceError(f"{path} is neither a responses file nor a `murgat score` folder")
    if abstained and run is None:
        raise SourceError("--abstained takes a `murgat score` folder (its abstained verdicts)")
    for item in read_responses(source.responses):
        if isinstance(item, InputError):
            source.unusable.append(Unusable(item.id, item.source, item.reason))
            continue
        try:
            media = resolve_video(root, item.video)
        except MediaError as e:
            source.unusable.append(Unusable(item.id, item.source, str(e)))
            continue
        seg = segment(item.generation)
        record = run.records.get(item.id) if run is not None else None
        proposals, note = (
            _proposals(record, tuple(seg.sentences), run.unreadable)
            if run is not None
            else (tuple(None for _ in seg.sentences), None)
        )
        sentences = tuple(
            Sentence(s.text, s.claim, tuple(s.citations), p)
            for s, p in zip(seg.sentences, proposals)
        )
        ask, digest = None, item_digest(item.id, sentences)
        if abstained and run is not None:  # (--abstained without a run is refused above)
            ask = abstained_questions(record) if record is not None else ()
            # A response whose line could not be read may have had abstentions: said, not asked.
            if not ask and not (record is None and run.unreadable):
                continue
            if note is not None:
                source.unusable.append(Unusable(item.id, item.source, note))
                continue
            # Answers about the run's facts are not answers about a person's own facts.
            facts = [p.facts if p is not None else None for p in proposals]
            digest = item_digest(f"{item.id}#abstained:{json.dumps([ask, facts])}", sentences)
        question = item.question if isinstance(item.question, str) else None
        source.items.append(
            Item(
                len(source.items),
                item.id,
                item.video,
                media,
                sentences,
                question,
                item.options,
                digest,
                note,
                ask,
            )
        )
        if record is not None:
            view = from_record(record)
            if view is not None:
                source.judge[item.id] = view
    return source


__all__ = [
    "abstained_questions",
    "Item",
    "Proposal",
    "Sentence",
    "Source",
    "SourceError",
    "Unusable",
    "item_digest",
    "load_source",
]
