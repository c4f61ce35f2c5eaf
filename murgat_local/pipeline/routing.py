"""Attribution judges routed by modality: `--entailer-visual M`, `--entailer-audio M`.

A fact whose citations are all visual goes to the visual judge, all audio to the audio judge, and
one citing both (or a call with no media) to the entailer itself, which must take both or has
that call refused with the reason. Each route is an ordinary StageJudge on its own engine, so its
verdicts are cached under its own identity: the cache key holds the judge that answered, and a
judge that ran alone before lends its verdicts to the routes.

`check_routes` refuses a run at start whose entail judges cannot take what its input cites, as
far as the input has been read (`Cited`: no model is needed to know what a response cites); a call
of a response read later that cites such a modality is refused on its own, with the reason.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..engines.holder import EngineHolder
from ..inputs.responses import InputError, ResponseItem
from ..judges.calls import Call, Outcome
from ..text.segment import segment
from .composite import HolderGroup, SummedCounters
from .judging import Judge

ROUTES = ("visual", "audio")
FLAGS = {"visual": "--entailer-visual", "audio": "--entailer-audio"}
# What a cited modality reaches the model as: a visual span is a clip, or its frames as images.
_TAKES = {"visual": ({"video"}, {"image"}), "audio": ({"audio"},)}


def takes(modalities: frozenset[str], cited: str) -> bool:
    return any(need <= modalities for need in _TAKES[cited])


def route_of(call: Call) -> str:
    """'visual' or 'audio' for a call whose cited segments are all of that modality, else 'mixed'."""
    cited = {k[1] for k in call.media_keys if len(k) > 1}
    return next(iter(cited)) if len(cited) == 1 and cited <= set(ROUTES) else "mixed"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass
class Cited:
    """What the responses read so far cite, per modality: citations, the sentences holding them
    and the responses holding those. Facts are known only after decomposition (a model), so
    sentences are what can be counted before anything is judged."""

    responses: int = 0
    citations: Counter = field(default_factory=Counter)
    sentences: Counter = field(default_factory=Counter)
    by_response: Counter = field(default_factory=Counter)

    def add(self, sentences: Iterable) -> None:
        """One response's sentences (`text.segment.Sentence`s)."""
        self.responses += 1
        found: set[str] = set()
        for s in sentences:
            # An unreadable citation is never sent: it says nothing about what a judge gets.
            mods = [c.modality for c in s.citations if c.valid and c.modality in ROUTES]
            self.citations.update(mods)
            self.sentences.update(set(mods))
            found.update(mods)
        self.by_response.update(found)

    def describe(self, modality: str) -> str:
        return (
            f"{_plural(self.sentences[modality], 'sentence')} in {self.by_response[modality]} of "
            f"{_plural(self.responses, 'response')} read cite {modality} segments "
            f"({_plural(self.citations[modality], 'citation')})"
        )


def cited_in(items: Iterable[ResponseItem | InputError], options) -> Cited:
    """What `items` (responses; an input error is skipped) cite, split as the protocol splits
    them under `options` (`ProtocolOptions`)."""
    cited = Cited()
    for item in items:
        if not isinstance(item, ResponseItem):
            continue
        generation = item.generation
        try:
            seg = segment(
                generation,
                compat=options.compat,
                parse_reasoning=options.parse_reasoning,
                decontextualize=options.decontextualize,
                decontextualized_text=item.record.get("decontextualized_text"),
            )
        except Exception:  # the protocol records this response's error when it prepares it
            continue
        cited.add(seg.sentences)
    return cited


def check_routes(
    main: tuple[str, EngineHolder], routes: Mapping[str, tuple[str, EngineHolder]], cited: Cited
) -> None:
    """ValueError naming the model, the modality, how much of the input cites it and the flag
    that routes it, for an entail judge that takes media but not a modality the input read so
    far (`cited`) would send it. A model that takes no media at all, or one whose modalities
    are unknown (a panel), is left to refuse per call."""
    for modality in ROUTES:
        if not cited.sentences[modality]:
            continue
        name, holder = routes.get(modality, main)
        modalities = holder.modalities
        if modalities is None or modalities == {"text"} or takes(modalities, modality):
            continue
        why = ""
        unavailable = holder.unavailable
        lost = {"visual": ("video", "image"), "audio": ("audio",)}[modality]
        reasons = [unavailable[m] for m in lost if m in unavailable]
        if reasons:
            why = f" on this engine ({reasons[0]})"
        count = cited.describe(modality)
        if modality in routes:
            raise ValueError(
                f"{FLAGS[modality]} {name}: model {name!r} cannot take {modality} input{why}, and "
                f"{count}; name a model that takes {modality}"
            )
        raise ValueError(
            f"model {name!r} judges attribution but cannot take {modality} input{why}: {count}, "
            f"and their facts would be sent to it; route them to a model that can with "
            f"{FLAGS[modality]} MODEL"
        )


class RoutedEngine(HolderGroup):
    """The routes as one engine holder (identity, detail, started, get, close) for provenance."""

    kind = "routed"

    def __init__(self, judges: dict[str, tuple[str, Judge]]):
        super().__init__(j.engine for _, j in judges.values())
        self.holders = {route: (name, j.engine) for route, (name, j) in judges.items()}
        blob = "|".join(f"{r}={h.identity}" for r, (_, h) in sorted(self.holders.items()))
        self.identity = "routed:" + hashlib.sha256(blob.encode()).hexdigest()[:20]
        self.identity_detail = {
            "kind": "routed",
            "routes": {
                r: {
                    "model": n,
                    "engine": h.kind,
                    "identity": h.identity,
                    "detail": h.identity_detail,
                }
                for r, (n, h) in self.holders.items()
            },
        }
        self.neutralization = None


class RoutedCounters(SummedCounters):
    """The routes' counters added up (the routes run one after another, so their wall times add
    up too), and each route's own with its model."""

    def __init__(self, judges: dict[str, tuple[str, Judge]]):
        super().__init__([j for _, j in judges.values()])
        self._routes = judges

    @property
    def wall_s(self) -> float:
        return sum(j.counters.wall_s for _, j in self._routes.values())

    def as_dict(self) -> dict:
        return {
            **self.totals(),
            "wall_s": self.wall_s,
            "routes": {
                r: {"model": n, **j.counters.as_dict()} for r, (n, j) in self._routes.items()
            },
        }


class RoutedJudge:
    """The entail stage's judge: each call goes to its route's StageJudge, results in order."""

    def __init__(self, stage: str, judges: dict[str, tuple[str, Judge]]):
        """`judges`: route ('visual', 'audio', 'mixed') -> (model name, judge: a StageJudge, or a panel for 'mixed'); 'mixed' is
        the entailer, which also takes a route that has no judge of its own."""
        self.stage = stage
        self.judges = judges
        main = judges["mixed"][1]
        self.cache, self.batch_size = main.cache, main.batch_size
        self.engine = RoutedEngine(judges)
        self.counters = RoutedCounters(judges)
        self.on_progress = None

    @property
    def on_progress(self):
        return self._progress

    @on_progress.setter
    def on_progress(self, fn: Callable[[int, float], None] | None) -> None:
        self._progress = fn
        for _, j in self.judges.values():
            j.on_progress = fn

    def judge_for(self, call: Call) -> str:
        route = route_of(call)
        return route if route in self.judges else "mixed"

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        by_route: dict[str, list[int]] = {}
        for i, c in enumerate(calls):
            by_route.setdefault(self.judge_for(c), []).append(i)
        out: list[Outcome | None] = [None] * len(calls)
        for route, idx in by_route.items():
            for i, o in zip(idx, self.judges[route][1].run([calls[i] for i in idx])):
                out[i] = o
        done = [o for o in out if o is not None]
        assert len(done) == len(out), "every call has a route"
        return done


__all__ = [
    "FLAGS",
    "ROUTES",
    "Cited",
    "RoutedJudge",
    "check_routes",
    "cited_in",
    "route_of",
    "takes",
]
