"""Output constraints: a typed verdict (a pydantic model), a choice, or free text.

A verdict type's JSON schema is compiled once, by outlines-core, into a regular expression that
every engine enforces with grammar-constrained decoding, so a finished generation always
parses. Free strings are bounded in length and may not contain quotes, backslashes or control
characters: a random-weight model cannot run away inside one, and the bound fits within the
engine's token budget (`max_tokens`). A generation cut by the token limit still fails to
parse; `parse_verdict` returns that failure as a value with the raw text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

# outlines-core's JSON string: any char but quote/backslash/control, or an escape sequence.
_JSON_CHAR = r'([^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])'
# Ours: no escapes at all, so a verdict's text is exactly what the model wrote.
_PLAIN_CHAR = r'[^"\\\x00-\x1F\x7F-\x9F]'


class Verdict(BaseModel):
    """Base of every verdict type. `max_tokens` is a budget that always fits the grammar."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_tokens: ClassVar[int] = 16
    # A yes/no verdict (a `label` of YES or NO): engines read its confidence, `p_yes`.
    yes_no: ClassVar[bool] = False

    @classmethod
    def schema_text(cls) -> str:
        """The JSON schema as text (not pydantic's deprecated `schema_json`, which it shadowed)."""
        return json.dumps(cls.model_json_schema())

    @classmethod
    def regex(cls) -> str:
        return _compiled_regex(cls)


@functools.cache
def _compiled_regex(cls: type[Verdict]) -> str:
    from outlines_core.json_schema import build_regex_from_schema

    return build_regex_from_schema(cls.schema_text(), "").replace(_JSON_CHAR, _PLAIN_CHAR)


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


def choice_regex(choices: Sequence[str]) -> str:
    """A constraint that admits exactly one of `choices`."""
    return "(" + "|".join(re.escape(c) for c in choices) + ")"
