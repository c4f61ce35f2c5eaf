"""What the judges read of one response, and how it is split: decided here and nowhere else.

The scorer's protocol (`pipeline.protocol`) and `murgat segment` both call `segment`, with every
option that changes its result, so what `segment` prints is what the scorer judges:

- default mode: the reasoning (thinking, a "Reasoning:" label and the "Answer:" line removed),
  split by the project's splitter; an input's `decontextualized_text` is not used (each sentence
  is decontextualized from the ones before it, which may rewrite its claim, never its split or
  its citations).
- `--compat reference`: what the reference's `run_metric.py` judges. Its default invocation
  judges the generation as written (labels, the answer line and any thinking become sentences);
  with `parse_reasoning` (its `--parse_reasoning`) the reasoning it extracts. An input's own
  non-blank `decontextualized_text` is split instead, as it is; otherwise, when
  decontextualizing, a model rewrites the whole text first and its rewrite is split (by `split`,
  as here). Sentences repeated word for word count once (the reference keys them by text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .citations import (
    Citation,
    parse_citations,
    parse_citations_reference,
    strip_citations,
    strip_citations_reference,
    unparsed_citations,
)
from .clean import clean_generation, clean_generation_reference
from .sentences import split_sentences, split_sentences_reference

REFERENCE = "reference"

TextFrom = Literal["reasoning", "generation", "decontextualized_text"]
# What a decontextualizer changes before the judges read the response: each sentence's claim
# ("sentences"), the whole text before it is split ("text"), or nothing (None).
Rewrite = Literal["sentences", "text"]


@dataclass(frozen=True)
class Sentence:
    text: str  # as written, citations included
    claim: str  # what the judges read: the text without its citations (all of it when nothing else is left)
    citations: list[Citation]
    # Default mode: bracketed text that looks like a citation and is not read as one.
    unparsed: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        out: dict = {
            "text": self.text,
            "claim": self.claim,
            "citations": [c.to_dict() for c in self.citations],
        }
        if self.unparsed:
            out["unparsed_citations"] = list(self.unparsed)
        return out


@dataclass(frozen=True)
class Segmented:
    mode: str  # "default" or "reference"
    text: str  # the response's text under judgement: what a whole-text decontextualization rewrites
    text_from: TextFrom  # where `sentences` were split from
    given_text: (
        str | None
    )  # reference mode: the input's own decontextualized_text, split instead of `text`
    rewrite: Rewrite | None
    answer_letter: str | None
    answer_text: str
    sentences: list[Sentence]

    def to_dict(self) -> dict:
        """The record `murgat segment` prints (without the item's index, id and source)."""
        return {
            "mode": self.mode,
            "text_from": self.text_from,
            "rewrite": self.rewrite,
            "answer": self.answer_letter,
            "answer_text": self.answer_text,
            "sentences": [s.to_dict() for s in self.sentences],
        }


def split(text: str, compat: str | None = None) -> list[Sentence]:
    """`text`'s sentences with their claims and citations, as the judges get them.

    Args:
        text: the text to split, as it is (a reasoning, a generation, or a decontextualized text).
        compat: None (default mode) or "reference"; the reference counts a repeated sentence once.
    """
    if compat == REFERENCE:
        return [
            _sentence(s, parse_citations_reference, strip_citations_reference)
            for s in dict.fromkeys(split_sentences_reference(text))
        ]
    return [
        _sentence(s, parse_citations, strip_citations, unparsed_citations)
        for s in split_sentences(text)
    ]


def _sentence(text: str, parse, strip, unparsed=None) -> Sentence:
    found = tuple(unparsed(text)) if unparsed is not None else ()
    return Sentence(text, strip(text) or text, parse(text), found)


def segment(
    generation: str,
    *,
    compat: str | None = None,
    parse_reasoning: bool = False,
    decontextualize: bool = True,
    decontextualized_text: object = None,
) -> Segmented:
    """What the judges read of `generation`, and how it is split.

    Args:
        generation: the response as the input holds it.
        compat: None (default mode) or "reference".
        parse_reasoning: reference mode only: the reference's `--parse_reasoning` (judge the
            reasoning it extracts, not the whole generation).
        decontextualize: whether a model rewrites the response before it is judged (only
            recorded in `rewrite`: no model is called here).
        decontextualized_text: the input's own `decontextualized_text` field, whatever it holds;
            reference mode splits it instead when it is a non-blank string.
    """
    if compat not in (None, REFERENCE):
        raise ValueError(f"compat takes {REFERENCE!r} or None, not {compat!r}")
    if parse_reasoning and compat != REFERENCE:
        raise ValueError(
            "parse_reasoning reproduces a reference invocation: use it with compat 'reference'"
        )
    if compat != REFERENCE:
        cleaned = clean_generation(generation)
        return Segmented(
            "default",
            cleaned.reasoning,
            "reasoning",
            None,
            "sentences" if decontextualize else None,
            cleaned.answer_letter,
            cleaned.answer_text,
            split(cleaned.reasoning),
        )
    cleaned = clean_generation_reference(generation)
    text_from: TextFrom
    rewrite: Rewrite | None
    text, text_from = (
        (cleaned.reasoning, "reasoning") if parse_reasoning else (generation, "generation")
    )
    given = (
        decontextualized_text
        if isinstance(decontextualized_text, str) and decontextualized_text.strip()
        else None
    )
    if given is not None:
        text_from, rewrite = "decontextualized_text", None
    else:
        rewrite = "text" if decontextualize else None
    return Segmented(
        REFERENCE,
        text,
        text_from,
        given,
        rewrite,
        cleaned.answer_letter,
        cleaned.answer_text,
        split(given if given is not None else text, REFERENCE),
    )


def segment_response(generation: str, compat: str | None = None, **options) -> dict:
    """`segment(...)` as the record `murgat segment` prints."""
    return segment(generation, compat=compat, **options).to_dict()
