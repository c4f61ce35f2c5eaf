"""What the stage judges made of other stage judges share (a panel's members, a stage's routes):
their engine holders standing as one, and their counters added up.

The members' holders belong to the runner, which starts and closes them; a composite only
starts them when asked (`get`) and reports whether any has started.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..engines.base import EngineStats
from ..engines.holder import EngineHolder
from .judging import Judge, StageCounters, folded

# A composite's counts are its members' (its calls are theirs); its wall time is its own.
COUNTED = tuple(f for f in StageCounters.__dataclass_fields__ if f != "wall_s")


class HolderGroup:
    """Several engine holders as one holder (`engines.holder.EngineHolder`): `started`, `get`,
    `close`; what one model would know (its preset, modalities, tokenizer) a group does not."""

    kind = "group"
    identity = ""
    identity_detail: dict | None = None
    neutralization: dict | None = None
    preset = None
    modalities: frozenset[str] | None = None  # each call is checked by its member
    unavailable: dict[str, str] = {}
    per_item = False
    needs_media = True
    media_by_reference = False

    def __init__(self, holders: Iterable[EngineHolder]) -> None:
        self._holders = list(holders)
        self.stats = EngineStats()  # the members' holders count their own

    @property
    def started(self) -> bool:
        return any(h.started for h in self._holders)

    def get(self) -> HolderGroup:
        for h in self._holders:
            h.get()
        return self

    def close(self) -> None:
        pass  # the members' holders belong to the runner, which closes them

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        return None


class SummedCounters:
    """The members' counters added up, field by field (`COUNTED`)."""

    def __init__(self, judges: Sequence[Judge]) -> None:
        self._judges = list(judges)

    def __getattr__(self, name: str):
        if name in COUNTED:
            return sum(getattr(j.counters, name) for j in self.__dict__["_judges"])
        raise AttributeError(name)

    def totals(self) -> dict:
        return folded({k: getattr(self, k) for k in COUNTED})
