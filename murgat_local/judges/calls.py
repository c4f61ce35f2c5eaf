"""A model call before it is sent (`Call`) and what came back (`Outcome`): plain values the
stage runner keys, caches and batches, and the protocol and the responders build and read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..engines import MediaPart, Request, Sampling, Verdict
from ..engines.confidence import METHOD as P_YES_METHOD
from ..text.clean import remove_thinking
from .prompts import PromptTemplate
from .verdicts import ReasonedYesNo, YesNo

V = TypeVar("V", bound=Verdict)


@dataclass
class Call:
    """A model call before it is sent: enough to key it, and a thunk to cut its media.

    The output contract is the template's verdict type, or `choices`, or free text (a template
    without a verdict) decoded with `sampling`, shaped by `pattern` when set; `captions` label
    the media parts. `item` is the input item the call is for (a response id): not part of
    the key, except for an engine that answers per item (see `StageJudge.keys`)."""

    template: PromptTemplate
    user: str
    media_keys: tuple = ()
    media: Callable[[], tuple[MediaPart, ...]] | None = None
    evidence: str = ""
    choices: tuple[str, ...] | None = None
    sampling: Sampling | None = None
    captions: tuple[str | None, ...] = ()
    pattern: str | None = None
    item: str | None = None
    # The same media as plain segment references (`SegmentRef`), for an engine that cuts where
    # the data lives (Ray); None where the media is not a set of cited segments.
    segments: tuple | None = None

    def material(self, stage: str, judge: str) -> dict:
        verdict = self.template.verdict
        m: dict = {
            "stage": stage,
            "judge": judge,
            "template": self.template.digest,
            "system": self.template.system,
            "user": self.user,
            "media": [list(k) for k in self.media_keys],
            "verdict": verdict.__name__ if verdict is not None else None,
            "max_tokens": verdict.max_tokens if verdict is not None else None,
        }
        # A yes/no verdict's confidence is read and cached with it: how it is read is part of
        # its key (a verdict cached before p_yes existed has another key and is judged again).
        if verdict is not None and verdict.yes_no:
            m["p_yes"] = P_YES_METHOD
        # Only what is set, so the keys of plain judge calls stay as they always were.
        if self.choices is not None:
            m["choices"] = list(self.choices)
        if self.sampling is not None:
            m["sampling"] = self.sampling.as_dict()
        if self.captions:
            m["captions"] = list(self.captions)
        if self.pattern is not None:
            m["pattern"] = self.pattern
        return m

    def request(self, media: tuple[MediaPart, ...], stage: str) -> Request:
        """The request to send, for the judge of `stage` (the stage its key names too)."""
        return Request(
            self.user,
            self.template.verdict,
            self.template.system,
            media,
            choices=self.choices,
            sampling=self.sampling,
            captions=self.captions,
            pattern=self.pattern,
            item=self.item,
            stage=stage,
        )


@dataclass(frozen=True)
class Outcome:
    """The verdict of one call, or why there is none."""

    verdict: Verdict | None = None
    raw: str = ""
    unparsed: str | None = None  # the reason a generation did not parse
    error: str | None = None  # refused or failed before reaching the model
    cached: bool = False
    key: str = ""
    note: str | None = None  # what the engine changed to fit the request
    # Prompt tokens per media modality that reached the model (`engines.reach`); None with
    # `reached_unknown` saying why where they could not be counted.
    reached: dict | None = None
    reached_unknown: str | None = None
    # Why the cited parts were not counted one by one (only a cited modality of zero tokens
    # was caught: `engines.reach.unreached`); None where they were, or nothing was cited.
    cited_unknown: str | None = None
    # A panel's decision: each member's own outcome (name, Outcome) and how the vote went.
    members: tuple = ()
    panel: dict | None = None
    # A yes/no verdict's confidence (`engines.confidence`), or why there is none.
    p_yes: float | None = None
    p_yes_unknown: str | None = None
    thought_cut: bool = False  # a thinking judge's thought reached its budget and was closed
    # An escalation cascade's decision (`pipeline.cascade`): `decided_by` (None: abstained) and
    # `asked`, each judge asked as (judges.cascade.Step, Outcome).
    cascade: dict | None = None

    @property
    def ok(self) -> bool:
        """A verdict, a choice or a free text came back (for a verdict call, `verdict` is set)."""
        return self.error is None and self.unparsed is None

    @property
    def text(self) -> str:
        """The answer after any reasoning block: a choice, or free text."""
        return remove_thinking(self.raw)

    def verdict_as(self, kind: type[V]) -> V:
        """The verdict, as the type the call's template asked for (read after `ok`); a
        TypeError where there is no verdict of that type (a caller's mistake, not the model's)."""
        v = self.verdict
        if not isinstance(v, kind):
            raise TypeError(f"expected a {kind.__name__} verdict, got {type(v).__name__}")
        return v

    @property
    def yes(self) -> bool:
        """A yes/no verdict's answer (`YesNo` or `ReasonedYesNo`; read after `ok`)."""
        v = self.verdict
        if not isinstance(v, YesNo | ReasonedYesNo):
            raise TypeError(f"expected a yes/no verdict, got {type(v).__name__}")
        return v.yes

    def trace(self) -> dict:
        d: dict = {"raw": self.raw}
        if self.unparsed:
            d["unparsed"] = self.unparsed
        if self.error:
            d["error"] = self.error
        if self.note:
            d["note"] = self.note
        if self.thought_cut:
            d["thought_cut"] = True
        if self.reached is not None or self.reached_unknown:
            d["reached"] = self.reached
            if self.reached_unknown:
                d["reached_unknown"] = self.reached_unknown
        return d
