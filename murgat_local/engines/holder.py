"""What a pipeline holds for each model: an engine holder, known before (and without) starting
the engine it holds. `LazyEngine` is the one for models; human labels, a panel's, a cascade's and
the routes' groups are the others. Each states every attribute here explicitly: nothing that
reads a holder guesses (no `getattr` with a default)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .base import EngineStats

if TYPE_CHECKING:
    from .presets import Preset


class EngineHolder(Protocol):
    @property
    def identity(self) -> str:
        """What makes two holders give the same verdicts (the cache key's judge)."""

    @property
    def identity_detail(self) -> dict | None:
        """The identity's material, for summary.json's provenance (None: none recorded)."""

    @property
    def kind(self) -> str:
        """The registered engine name, or what else it is ("human", "panel", "cascade", ...)."""

    @property
    def neutralization(self) -> dict | None:
        """Which special tokens untrusted text is stripped of (None: not a model's tokenizer)."""

    @property
    def preset(self) -> Preset | None:
        """The model's preset (None: not one model)."""

    @property
    def modalities(self) -> frozenset[str] | None:
        """What it takes, known before it starts (None: not known, each call is checked)."""

    @property
    def unavailable(self) -> Mapping[str, str]:
        """Modalities the model has but this runtime cannot take, each with the reason."""

    @property
    def per_item(self) -> bool:
        """Its answers depend on the item (`Request.item`): calls are keyed by item too."""

    @property
    def needs_media(self) -> bool:
        """False where it answers from the prompt alone: no segment is cut for it."""

    @property
    def media_by_reference(self) -> bool:
        """Cited segments travel as references, cut where the data lives (Ray)."""

    @property
    def started(self) -> bool: ...

    @property
    def stats(self) -> EngineStats: ...

    def get(self) -> Any: ...

    def close(self) -> None: ...

    def check_response(
        self, item_id: str, sentences: Sequence[str], *, member: bool = False
    ) -> str | None:
        """Why this response cannot be judged by it (None: it can); a `member` of a cascade
        need not hold every response."""


__all__ = ["EngineHolder"]
