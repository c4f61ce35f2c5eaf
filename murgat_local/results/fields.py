"""The field types and base models every record, summary and block is built from: the bounds a
value keeps (a score in [0, 1], a count >= 0) and the two kinds of sub-object (`Part`: every key
named; `Block`: the named keys typed, any other kept)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# A JSON number as written: an int stays an int, a float a float (a round trip keeps the text).
Number = int | float
# A fraction: a score, a probability, a share. No NaN nor infinity.
Score = Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
# How many of something.
Count = Annotated[int, Field(ge=0)]
# A time, a length or a duration in seconds (or a weight): finite, never negative.
NonNegative = Annotated[int, Field(ge=0)] | Annotated[float, Field(ge=0, allow_inf_nan=False)]
# A value in [-1, 1]: a difference of two fractions, a correlation coefficient.
Signed = (
    Annotated[int, Field(ge=-1, le=1)] | Annotated[float, Field(ge=-1, le=1, allow_inf_nan=False)]
)
# A 95% interval [low, high] of a fraction, and of a value in [-1, 1].
Interval = Annotated[list[Score], Field(min_length=2, max_length=2)]
SignedInterval = Annotated[list[Signed], Field(min_length=2, max_length=2)]
# A cited time in seconds; the reference's grammar writes -1 for a time it cannot read.
CitedTime = Annotated[int, Field(ge=-1)] | Annotated[float, Field(ge=-1, allow_inf_nan=False)]
# A citation's index in its sentence, as a JSON key: "0", "1", ...
IndexKey = Annotated[str, StringConstraints(pattern=r"^(0|[1-9][0-9]{0,5})$")]
Status = Literal["ok", "error"]
Mode = Literal["default", "reference"]
QuestionType = Literal["multiple-choice", "open"]
# A label of `--group-by`: a text, or several.
Label = str | list[str | None] | None


def described(default: Any = None, description: str = "", **kw: Any) -> Any:
    """A field's default and its description (what `murgat schema` prints)."""
    return Field(default, description=description, **kw)


d = described


def many(kind: type, description: str) -> Any:
    """A list or an object field: empty when absent, never null (a writer writes one or leaves
    the key out)."""
    return Field(default_factory=kind, description=description)


class Part(BaseModel):
    """A sub-object of a record: every key named, none other accepted."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Block(BaseModel):
    """A block of a summary that records the run as it went (counters, certificates, agreement
    statistics): every key murgat writes is named, typed and described; a key it does not name
    (an older or a newer murgat's) is kept as written, never refused, so a run folder stays
    readable across versions."""

    model_config = ConfigDict(extra="allow", strict=True)
