"""Results per category: which groups a scored record belongs to, and one accumulator per group.
Pure: no I/O.

A record belongs to group VALUE of FIELD when its `categories[FIELD]` is VALUE, or a list
holding VALUE (a record is then in each of the list's groups, so a field's groups can add up to
more responses than the run has). Without a `categories` entry for FIELD, `model`, `benchmark`
and `question_type` are read from the record itself. A record with no value for FIELD (absent,
null, empty) is in the group `(none)`, so every record is counted under every field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from ..results import ScoreRecord

NO_VALUE = "(none)"
# Fields every record may carry at its top level, grouped on when `categories` lacks them.
RECORD_FIELDS = ("model", "benchmark", "question_type")


def _text(v) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return str(v)
    return v if isinstance(v, str) and v.strip() else None


def group_values(record: ScoreRecord, field: str) -> tuple[str, ...]:
    """The groups of `field` that `record` belongs to (at least one: `(none)` when it has no value)."""
    value: object = None
    if field in record.categories:
        value = record.categories[field]
    elif field in RECORD_FIELDS:
        value = getattr(record, field)
    if isinstance(value, (list, tuple)):
        values = tuple(dict.fromkeys(t for t in map(_text, value) if t is not None))
    else:
        text = _text(value)
        values = (text,) if text is not None else ()
    return values or (NO_VALUE,)


class _Accumulator(Protocol):
    def add(self, r: ScoreRecord) -> None: ...


class _Summarising(_Accumulator, Protocol):
    def result(self) -> dict: ...


A = TypeVar("A", bound=_Accumulator)
S = TypeVar("S", bound=_Summarising)


class Grouped(Generic[A]):
    """One accumulator (a running `Summary`, the values of an interval) per group of each field,
    fed record by record; memory grows with the groups, not with the records."""

    def __init__(self, fields: Iterable[str], make: Callable[[], A]):
        self.fields = tuple(dict.fromkeys(fields))
        self.groups: dict[str, dict[str, A]] = {f: {} for f in self.fields}
        self._make = make

    def add(self, r: ScoreRecord) -> None:
        for f in self.fields:
            groups = self.groups[f]
            for v in group_values(r, f):
                if v not in groups:
                    groups[v] = self._make()
                groups[v].add(r)

    def items(self, field: str) -> list[tuple[str, A]]:
        """The field's groups by value, `(none)` last."""
        groups = self.groups[field]
        return sorted(groups.items(), key=lambda kv: (kv[0] == NO_VALUE, kv[0]))

    def result(self: Grouped[S]) -> dict[str, dict[str, dict]]:
        """`by_group` of a summary: each accumulator's `result()`, per field and value."""
        return {f: {v: acc.result() for v, acc in self.items(f)} for f in self.fields}
