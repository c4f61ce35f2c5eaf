"""What the scorer sees of one response before any model: cleaned text, sentences, citations."""

from __future__ import annotations

from .citations import parse_citations, parse_citations_reference, strip_citations, strip_citations_reference
from .clean import clean_generation, clean_generation_reference
from .sentences import split_sentences, split_sentences_reference


def segment_response(generation: str, compat: str | None = None) -> dict:
    reference = compat == "reference"
    cleaned = (clean_generation_reference if reference else clean_generation)(generation)
    split = split_sentences_reference if reference else split_sentences
    parse = parse_citations_reference if reference else parse_citations
    strip = strip_citations_reference if reference else strip_citations
    sentences = []
    for s in split(cleaned.reasoning):
        sentences.append({"text": s, "claim": strip(s), "citations": [c.to_dict() for c in parse(s)]})
    return {
        "mode": compat or "default",
        "answer": cleaned.answer_letter,
        "answer_text": cleaned.answer_text,
        "sentences": sentences,
    }
