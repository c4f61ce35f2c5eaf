"""Reading human labels: one JSONL line per response, its default-mode sentences labelled.

    {"id": "h01", "annotator": "a1",
     "sentences": [
       {"text": "A red square fills the frame (visual, 0:01).", "verifiable": true,
        "facts": [{"text": "A red square fills the frame.", "entailed": true, "precise": [true]}]},
       {"text": "Therefore, B is correct.", "verifiable": false}]}

`sentences` are the sentences `murgat segment` prints (default mode), in its order; `text` must
match the printed text after whitespace normalization (`compare_sentences`). `facts` (the human
decomposition) may be given for a verifiable sentence that has citations, and only there. Per
fact, `entailed`: whether the sentence's citations together support it; `precise`: one boolean
per citation of the sentence, whether that citation is needed (read when `entailed` is true,
which requires it). `order` (written by `murgat annotate`): `{"seed": S}` when the response was
asked in the random order drawn with seed S; absent when it was asked in file order or the line
was written otherwise (`murgat meta-eval` gives PPI estimates only on randomly drawn labels).
Other keys are ignored.

A line with `abstained` in place of `sentences` holds people's answers to the verdicts a run
abstained on (`murgat annotate RUN --abstained`): partial labels (`text/partial_labels.py`).

As with the responses, reading never stops at a bad line: each becomes a `LabelError` with its
line and, when known, its id; the other lines are read. A duplicate id keeps the first line.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..inputs.responses import Unparsed, iter_records
from .citations import Citation, parse_citations, strip_citations
from .partial_labels import PartialError, PartialResponse, parse_partial


@dataclass(frozen=True)
class LabelledFact:
    text: str
    entailed: bool
    precise: (
        tuple[bool, ...] | None
    )  # one per citation of the sentence; None when not entailed and not given


@dataclass(frozen=True)
class LabelledSentence:
    text: str  # as `murgat segment` prints it, citations included
    verifiable: bool
    facts: tuple[LabelledFact, ...] | None  # None: no human decomposition
    citations: tuple[Citation, ...]

    @property
    def claim(self) -> str:
        """What the judges read of it: the text without its citations (as the protocol does)."""
        return strip_citations(self.text) or self.text


@dataclass(frozen=True)
class LabelledResponse:
    id: str
    sentences: tuple[LabelledSentence, ...]
    annotator: str | None = None
    source: str = ""  # "line 3"
    order_seed: int | None = None  # asked in the random order of this seed (None: not recorded)


@dataclass(frozen=True)
class LabelError:
    index: int
    id: str | None
    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


def normalize_ws(text: str) -> str:
    return " ".join(text.split())


def compare_sentences(labels: LabelledResponse, sentences: Sequence[str]) -> str | None:
    """Why a response's sentences (as `murgat segment` prints them) are not the labelled ones,
    naming the first that differs (1-based); None when they match."""
    for i, (ours, theirs) in enumerate(zip(sentences, labels.sentences), start=1):
        if normalize_ws(ours) != normalize_ws(theirs.text):
            return f"sentence {i} differs from the labels: {normalize_ws(ours)!r} vs {normalize_ws(theirs.text)!r}"
    n, m = len(sentences), len(labels.sentences)
    if n > m:
        return (
            f"sentence {m + 1} is missing from the labels: {normalize_ws(sentences[m])!r} "
            f"(the response has {n} sentences, the labels {m})"
        )
    if m > n:
        return (
            f"the labels have a sentence {n + 1} the response does not: {normalize_ws(labels.sentences[n].text)!r} "
            f"(the response has {n} sentences, the labels {m})"
        )
    return None


class _Bad(ValueError):
    pass


def _type(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _bool(obj: dict, name: str, where: str) -> bool:
    value = obj.get(name)
    if not isinstance(value, bool):
        what = "is missing" if name not in obj else f"must be true or false, not {_type(value)}"
        raise _Bad(f"{where}field {name!r} {what}")
    return value


def _text(obj: dict, name: str, where: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        what = (
            "is missing"
            if name not in obj
            else "is empty"
            if isinstance(value, str)
            else f"must be a string, not {_type(value)}"
        )
        raise _Bad(f"{where}field {name!r} {what}")
    return value


def _fact(obj: object, n_citations: int, where: str) -> LabelledFact:
    if not isinstance(obj, dict):
        raise _Bad(f"{where}expected an object, got {_type(obj)}")
    text = _text(obj, "text", where).strip()
    entailed = _bool(obj, "entailed", where)
    precise = obj.get("precise")
    if precise is None:
        if entailed:
            raise _Bad(
                f"{where}field 'precise' is missing (one true/false per citation, required when entailed)"
            )
        return LabelledFact(text, entailed, None)
    if not isinstance(precise, list) or not all(isinstance(p, bool) for p in precise):
        raise _Bad(f"{where}field 'precise' must be a list of true/false, one per citation")
    if len(precise) != n_citations:
        raise _Bad(
            f"{where}field 'precise' has {len(precise)} entries; the sentence has {n_citations} citation"
            f"{'s' if n_citations != 1 else ''}"
        )
    return LabelledFact(text, entailed, tuple(precise))


def _sentence(obj: object, k: int) -> LabelledSentence:
    where = f"sentence {k}: "
    if not isinstance(obj, dict):
        raise _Bad(f"{where}expected an object, got {_type(obj)}")
    text = _text(obj, "text", where)
    verifiable = _bool(obj, "verifiable", where)
    citations = tuple(parse_citations(text))
    facts = obj.get("facts")
    if facts is None:
        return LabelledSentence(text, verifiable, None, citations)
    if not verifiable:
        raise _Bad(f"{where}'facts' given for a sentence labelled not verifiable")
    if not citations:
        raise _Bad(f"{where}'facts' given for a sentence without citations")
    if not isinstance(facts, list) or not facts:
        raise _Bad(f"{where}field 'facts' must be a non-empty list (omit it when there is none)")
    parsed = tuple(
        _fact(f, len(citations), f"{where}fact {j}: ") for j, f in enumerate(facts, start=1)
    )
    seen: set[str] = set()
    for j, f in enumerate(parsed, start=1):
        key = normalize_ws(f.text)
        if key in seen:
            raise _Bad(f"{where}fact {j}: the same fact twice ({f.text!r})")
        seen.add(key)
    return LabelledSentence(text, verifiable, parsed, citations)


def _response(obj: dict, source: str) -> LabelledResponse:
    sentences = obj.get("sentences")
    if not isinstance(sentences, list):
        what = "is missing" if "sentences" not in obj else f"must be a list, not {_type(sentences)}"
        raise _Bad(f"field 'sentences' {what}")
    annotator = obj.get("annotator")
    if annotator is not None and not isinstance(annotator, str):
        raise _Bad(f"field 'annotator' must be a string, not {_type(annotator)}")
    return LabelledResponse(
        str(obj["id"]),
        tuple(_sentence(s, k) for k, s in enumerate(sentences, start=1)),
        annotator,
        source,
        _order_seed(obj),
    )


def _order_seed(obj: dict) -> int | None:
    order = obj.get("order")
    if order is None:
        return None
    seed = order.get("seed") if isinstance(order, dict) else None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _Bad(f"field 'order' must be {{\"seed\": <integer>}}, not {json.dumps(order)[:80]}")
    return seed


def read_labels(
    path: str | pathlib.Path,
) -> tuple[dict[str, LabelledResponse | PartialResponse], list[LabelError]]:
    """The labelled responses by id, and every line that could not be used, in file order.

    JSONL or a JSON list, read as the responses are (byte-order marks, UTF-16, invalid UTF-8)."""
    labels: dict[str, LabelledResponse | PartialResponse] = {}
    errors: list[LabelError] = []
    seen: set[str] = set()
    for index, source, obj in iter_records(pathlib.Path(path)):
        if isinstance(obj, Unparsed):
            errors.append(LabelError(index, None, source, obj.reason))
            continue
        if not isinstance(obj, dict):
            errors.append(
                LabelError(index, None, source, f"expected a JSON object, got {_type(obj)}")
            )
            continue
        rid = obj.get("id")
        if rid is None or (isinstance(rid, str) and not rid.strip()):
            errors.append(LabelError(index, None, source, "missing field 'id'"))
            continue
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            errors.append(
                LabelError(
                    index,
                    None,
                    source,
                    f"field 'id' must be a string or an integer, not {_type(rid)}",
                )
            )
            continue
        rid = str(rid)
        if rid in seen:
            errors.append(
                LabelError(index, rid, source, f"duplicate id {rid!r} (first occurrence kept)")
            )
            continue
        seen.add(rid)
        try:
            if "abstained" in obj and "sentences" not in obj:
                labels[rid] = parse_partial(obj, source)
            else:
                labels[rid] = _response(obj, source)
        except (_Bad, PartialError) as e:
            errors.append(LabelError(index, rid, source, str(e)))
    return labels, errors


__all__ = [
    "LabelError",
    "LabelledFact",
    "LabelledResponse",
    "LabelledSentence",
    "compare_sentences",
    "normalize_ws",
    "read_labels",
]
