"""What `murgat annotate` asks about: the responses of a SOURCE, split as the scorer splits them.

SOURCE is either a responses file (JSONL or the reference's JSON list) or a `murgat score`
folder. A folder's records hold no video and no generation, so its responses are read again from
the input its `summary.json` names (checked against the SHA-256 recorded there; `responses`
overrides a path that moved), and its records only add the judges' proposals.

Either way each response is split by `text.segment.segment` in the default mode, the one
function `murgat segment` and the scorer use, so a labelled sentence's text is the text
`human:PATH` and `murgat meta-eval` compare against.

A response that cannot be labelled (an unreadable line, a video outside the media root or
missing) is an `Unusable` with its reason; the others are read.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from dataclasses import dataclass, field

from ..inputs.responses import InputError, read_responses
from ..media.source import MediaError, resolve_video
from ..meta.views import ResponseView, from_record
from ..results import ReadError, layout, read_objects, read_summary
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
    audio_point_window: float = 1.0


def item_digest(rid: str, sentences) -> str:
    payload = json.dumps([rid, [s.text for s in sentences]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _proposal(s: dict) -> Proposal:
    verdict = (
        (s.get("verifiable") or {}).get("value") if isinstance(s.get("verifiable"), dict) else None
    )
    facts = s.get("facts")
    if not isinstance(facts, list):
        return Proposal(verdict if isinstance(verdict, bool) else None, None)
    facts = [f for f in facts if isinstance(f, dict) and isinstance(f.get("text"), str)]
    joint = tuple(
        (f.get("joint") or {}).get("value") if isinstance(f.get("joint"), dict) else None
        for f in facts
    )
    precise = tuple(
        tuple(p if isinstance(p, bool) else None for p in f.get("precise") or ())
        if isinstance(f.get("precise"), list)
        else ()
        for f in facts
    )
    return Proposal(
        verdict if isinstance(verdict, bool) else None,
        tuple(f["text"] for f in facts),
        tuple(j if isinstance(j, bool) else None for j in joint),
        precise,
    )


def _proposals(
    record: dict | None, sentences: tuple
) -> tuple[tuple[Proposal | None, ...], str | None]:
    """The run record's proposal per sentence, when its sentences are this split's."""
    none = tuple(None for _ in sentences)
    if record is None:
        return none, "the run has no record for this response"
    if record.get("mode", "default") != "default":
        return none, "the run judged another split (--compat reference)"
    trace = record.get("trace")
    judged = trace.get("sentences") if isinstance(trace, dict) else None
    if not isinstance(judged, list) or not all(isinstance(s, dict) for s in judged):
        return none, f"the run's record has no usable trace (status {record.get('status')!r})"
    if [normalize_ws(str(s.get("text", ""))) for s in judged] != [
        normalize_ws(s.text) for s in sentences
    ]:
        return none, "the run judged other sentences than this split"
    return tuple(_proposal(s) for s in judged), None


def _read_run(
    folder: pathlib.Path, responses: pathlib.Path | None
) -> tuple[pathlib.Path, dict, dict, float]:
    summary_path, scores = folder / layout.SUMMARY, folder / layout.SCORES
    if not scores.is_file() or not summary_path.is_file():
        raise SourceError(
            f"{folder} is not a `murgat score` folder (it needs scores.jsonl and summary.json)"
        )
    read = read_summary(summary_path)
    if isinstance(read, ReadError):
        raise SourceError(f"{read}: the run's input is unknown")
    summary = read.dump()
    provenance = read.provenance or {}
    recorded = provenance.get("input")
    if not isinstance(recorded, dict):
        raise SourceError(f"{summary_path} does not name the run's input (no provenance.input)")
    window = ((provenance.get("config") or {}).get("media") or {}).get("audio_point_window", 1.0)
    if responses is None:
        given = pathlib.Path(str(recorded.get("path", "")))
        candidates = (
            [given] if given.is_absolute() else [given, folder / given, folder.parent / given]
        )
        responses = next((c for c in candidates if c.is_file()), None)
        if responses is None:
            raise SourceError(
                f"the run's input {str(given)!r} is not found; name it with --responses"
            )
    digest = hashlib.sha256(responses.read_bytes()).hexdigest()
    if recorded.get("sha256") and digest != recorded["sha256"]:
        raise SourceError(
            f"{responses} is not the file the run scored (its SHA-256 differs from "
            f"summary.json's); name the right one with --responses"
        )
    records: dict[str, dict] = {}
    for record in read_objects(scores):
        if not isinstance(record, ReadError) and "id" in record:
            records.setdefault(str(record["id"]), record)
    return responses, records, summary, float(window) if isinstance(window, (int, float)) else 1.0


def abstained_questions(record: dict) -> tuple[str, ...]:
    """The questions that ask people exactly the verdicts an escalated run abstained on
    (`murgat score --escalate-to`): a sentence's verifiability, a fact's entailment by its
    citations together (joint), a citation's necessity to a fact (alone / without it). Facts
    are the run's own decomposition, numbered as in its record (1-based)."""
    out: list[str] = []
    for i, s in enumerate((record.get("trace") or {}).get("sentences") or []):
        if (s.get("verifiable") or {}).get("abstained"):
            out.append(f"s{i + 1}.verifiable")
        for j, f in enumerate(s.get("facts") or []):
            if (f.get("joint") or {}).get("abstained"):
                out.append(f"s{i + 1}.f{j + 1}.entailed")
            cited = sorted(
                {
                    int(k)
                    for kind in ("alone", "without")
                    for k, v in (f.get(kind) or {}).items()
                    if (v or {}).get("abstained")
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
    records: dict | None = None
    window = 1.0
    if path.is_dir():
        responses, records, _, window = _read_run(path, responses)
        source = Source("run", path, responses, audio_point_window=window)
    elif path.is_file():
        source = Source("responses", path, path)
    else:
        raise SourceError(f"{path} is neither a responses file nor a `murgat score` folder")
    if abstained and records is None:
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
        proposals, note = (
            _proposals(records.get(item.id), tuple(seg.sentences))
            if records is not None
            else (tuple(None for _ in seg.sentences), None)
        )
        sentences = tuple(
            Sentence(s.text, s.claim, tuple(s.citations), p)
            for s, p in zip(seg.sentences, proposals)
        )
        ask, digest = None, item_digest(item.id, sentences)
        if abstained and records is not None:  # (--abstained without a run is refused above)
            ask = abstained_questions(records.get(item.id) or {})
            if not ask:
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
        if records is not None and item.id in records:
            view = from_record(records[item.id])
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
