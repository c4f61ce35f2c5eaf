"""Verdict types: the contract between a judge prompt and the model.

Each type is a pydantic model. Its JSON schema is compiled once, by outlines-core, into a regular
expression that every engine enforces with grammar-constrained decoding, so a finished
generation always parses. Free strings are bounded in length and may not contain quotes,
backslashes or control characters: a random-weight model cannot run away inside one, and the
bound fits within the engine's token budget (`max_tokens`). A generation cut by the token limit
still fails to parse; `parse_verdict` returns that failure as a value with the raw text.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

# outlines-core's JSON string: any char but quote/backslash/control, or an escape sequence.
_JSON_CHAR = r'([^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])'
# Ours: no escapes at all, so a verdict's text is exactly what the model wrote.
_PLAIN_CHAR = r'[^"\\\x00-\x1F\x7F-\x9F]'


class Verdict(BaseModel):
    """Base of every verdict type. `max_tokens` is a budget that always fits the grammar."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_tokens: ClassVar[int] = 16

    @classmethod
    def schema_json(cls) -> str:
        return json.dumps(cls.model_json_schema())

    @classmethod
    def regex(cls) -> str:
        return _compiled_regex(cls)


@functools.cache
def _compiled_regex(cls: type[Verdict]) -> str:
    from outlines_core.json_schema import build_regex_from_schema

    return build_regex_from_schema(cls.schema_json(), "").replace(_JSON_CHAR, _PLAIN_CHAR)


class YesNo(Verdict):
    """A binary judgment."""

    label: Literal["YES", "NO"]
    max_tokens: ClassVar[int] = 16

    @property
    def yes(self) -> bool:
        return self.label == "YES"


Reason = Annotated[str, StringConstraints(min_length=1, max_length=160)]


class ReasonedYesNo(Verdict):
    """A binary judgment with a short stated reason (costs more tokens than `YesNo`)."""

    reason: Reason
    label: Literal["YES", "NO"]
    max_tokens: ClassVar[int] = 256

    @property
    def yes(self) -> bool:
        return self.label == "YES"


FactText = Annotated[str, StringConstraints(min_length=1, max_length=120)]


class AtomicFacts(Verdict):
    """The self-contained atomic facts of one sentence."""

    facts: list[FactText] = Field(min_length=1, max_length=6)
    max_tokens: ClassVar[int] = 1024


SentenceText = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class Rewrite(Verdict):
    """One sentence, rewritten (decontextualisation)."""

    sentence: SentenceText
    max_tokens: ClassVar[int] = 512


LongText = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class RewrittenText(Verdict):
    """A whole answer, rewritten (the reference's whole-text decontextualisation)."""

    text: LongText
    max_tokens: ClassVar[int] = 2100


VERDICT_TYPES: dict[str, type[Verdict]] = {
    t.__name__: t for t in (YesNo, ReasonedYesNo, AtomicFacts, Rewrite, RewrittenText)
}


@dataclass(frozen=True)
class ParseFailure:
    """A generation that is not a valid verdict (e.g. truncated at the token limit)."""

    raw: str
    reason: str


def parse_verdict(kind: type[Verdict], raw: str) -> Verdict | ParseFailure:
    """Parse a generation into `kind`; never guesses, never defaults to NO."""
    text = raw.strip()
    if not re.fullmatch(kind.regex(), text):
        return ParseFailure(raw, "output does not match the verdict grammar (truncated?)")
    try:
        return kind.model_validate_json(text)
    except ValidationError as e:
        return ParseFailure(raw, f"invalid {kind.__name__}: {e.errors()[0]['msg']}")
