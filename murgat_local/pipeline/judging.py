"""One stage's judge calls: deduplicated, served from the cache when possible, batched otherwise.

Media for the calls that miss the cache is cut in a background thread one batch ahead of the
engine, so decoding overlaps with generation; calls served from the cache never decode.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..engines import Request, Result, Verdict
from ..engines.holder import EngineHolder
from ..engines.reach import MODALITIES, CitedTokens, short, unreached
from ..judges.calls import Call, Outcome
from .cache import CachedVerdict, VerdictCache, make_key


@dataclass
class StageCounters:
    calls: int = 0  # requested, before deduplication
    unique: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    unparsed: int = 0
    errors: int = 0
    failed: int = 0  # unique calls without a verdict (unparsed, refused or failed), cached or not
    cache_rejected: int = 0  # cached rows that did not validate, judged again
    # Calls whose cited media did not arrive whole: a part short of its expected tokens, or
    # (uncounted parts) a cited modality of zero tokens (errors, see `reach.unreached`).
    unreached: int = 0
    reached_unknown: int = 0  # calls with media whose tokens could not be counted
    cited_unknown: int = 0  # calls with media whose parts were not counted one by one
    # Yes/no verdicts without a p_yes (the engine gave no log-probabilities; each record says
    # why), and thinking judges' thoughts cut at their budget, over the unique calls.
    p_yes_unknown: int = 0
    thought_cut: int = 0
    # Prompt tokens per media modality that reached the model, over the unique calls (cached too).
    reached_image: int = 0
    reached_video: int = 0
    reached_audio: int = 0
    wall_s: float = 0.0

    def as_dict(self) -> dict:
        return folded(dict(self.__dict__))


def folded(counts: dict) -> dict:
    """Counters as summary.json shows them: the tokens that reached the model as one
    `reached` object (modality -> tokens)."""
    out = {
        k: v for k, v in counts.items() if not k.startswith("reached_") or k == "reached_unknown"
    }
    out["reached"] = {m: counts.get(f"reached_{m}", 0) for m in MODALITIES}
    return out


class Judge(Protocol):
    """A stage's judge as the protocol and the runner use it: a `StageJudge`, or a panel of them
    (`panel.PanelJudge`), or the routes to them by modality (`routing.RoutedJudge`), which take
    the same calls and keep counters of the same names."""

    stage: str
    cache: VerdictCache
    batch_size: int
    on_progress: Callable[[int, float], None] | None

    @property
    def engine(self) -> EngineHolder: ...

    @property
    def counters(self) -> Any: ...  # `StageCounters`, or the members' summed

    def run(self, calls: Sequence[Call]) -> list[Outcome]: ...


@dataclass
class StageJudge:
    stage: str
    engine: EngineHolder
    cache: VerdictCache
    batch_size: int = 256
    counters: StageCounters = field(default_factory=StageCounters)
    on_progress: Callable[[int, float], None] | None = None  # (calls done, seconds busy)

    def keys(self, calls: Sequence[Call]) -> list[str]:
        per_item = self.engine.per_item
        return [make_key(self._material(c, per_item)) for c in calls]

    def _material(self, call: Call, per_item: bool) -> dict:
        m = call.material(self.stage, self.engine.identity)
        if per_item:
            # An engine that answers per item (human labels) may answer the same prompt
            # differently for two items: their calls are neither merged nor share a verdict.
            m["item"] = call.item
        return m

    def pending(self, calls: Sequence[Call]) -> tuple[int, int]:
        """(unique calls, of which already cached) without running anything."""
        keys = list(dict.fromkeys(self.keys(calls)))
        return len(keys), len(self.cache.get_many(keys))

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        import time

        t0 = time.perf_counter()
        keys = self.keys(calls)
        first: dict[str, Call] = {}
        for k, c in zip(keys, calls):
            first.setdefault(k, c)
        self.counters.calls += len(calls)
        self.counters.unique += len(first)
        outcomes: dict[str, Outcome] = {}
        for k, v in self.cache.get_many(list(first)).items():
            if _reach_unchecked(first[k], v):
                self.counters.cache_rejected += 1
                continue
            try:
                outcomes[k] = _from_cache(k, v, first[k].template.verdict)
            except ValueError:  # a stored verdict that no longer validates is judged again
                self.counters.cache_rejected += 1
        self.counters.cache_hits += len(outcomes)
        if self.on_progress and outcomes:
            self.on_progress(len(outcomes), self.counters.wall_s + time.perf_counter() - t0)
        # Batch boundaries are fixed over all unique calls, cached or not, and a batch is
        # cached whole (one transaction): a resumed run sends exactly the batches an
        # uninterrupted run would have sent, so even batch-dependent numerics agree.
        # Calls on the same video go together, in time order, so each video is decoded in one
        # forward stretch.
        order = sorted(first, key=lambda k: [tuple(m[:4]) for m in first[k].media_keys])
        batches = [
            todo
            for i in range(0, len(order), self.batch_size)
            if (todo := [k for k in order[i : i + self.batch_size] if k not in outcomes])
        ]
        if batches:
            with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="media") as pool:
                ahead = pool.submit(self._build, [first[k] for k in batches[0]])
                for i, batch in enumerate(batches):
                    built = ahead.result()
                    if i + 1 < len(batches):
                        ahead = pool.submit(self._build, [first[k] for k in batches[i + 1]])
                    outcomes.update(self._judge(batch, built))
                    if self.on_progress:
                        self.on_progress(
                            len(batch), self.counters.wall_s + time.perf_counter() - t0
                        )
        self.counters.failed += sum(1 for k in first if not outcomes[k].ok)
        for k in first:
            o = outcomes[k]
            self.counters.reached_unknown += o.reached_unknown is not None
            self.counters.cited_unknown += o.cited_unknown is not None
            self.counters.thought_cut += o.thought_cut
            yes_no = o.ok and o.verdict is not None and o.verdict.yes_no
            self.counters.p_yes_unknown += bool(yes_no and o.p_yes is None)
            for m, n in (o.reached or {}).items():
                setattr(self.counters, f"reached_{m}", getattr(self.counters, f"reached_{m}") + n)
        self.counters.wall_s += time.perf_counter() - t0
        return [outcomes[k] for k in keys]

    def _build(self, calls: Sequence[Call]) -> list[Request | str]:
        # An engine that answers from the prompt alone (human labels) gets no media: none is cut.
        return build_requests(
            calls,
            self.stage,
            cut=self.engine.needs_media,
            by_reference=self.engine.media_by_reference,
        )

    def _judge(self, keys: list[str], built: list[Request | str]) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        send = [(k, r) for k, r in zip(keys, built) if isinstance(r, Request)]
        for k, r in zip(keys, built):
            if isinstance(r, str):
                out[k] = Outcome(error=r, key=k)
                self.counters.errors += 1
        if not send:
            return out
        results = self.engine.get().judge([r for _, r in send])
        rows = []
        for (k, req), res in zip(send, results):
            res = self._reach(req, res)
            reach: dict[str, Any] = {
                "reached": res.reached,
                "reached_unknown": res.reached_unknown,
                "cited_unknown": res.cited_unknown,
            }
            if res.error:
                out[k] = Outcome(error=res.error, key=k, **reach)
                self.counters.errors += 1
                continue
            self.counters.model_calls += 1
            stored = json.dumps(res.reached) if res.reached is not None else None
            cited = _cited_json(res) if req.media else None
            if res.ok:
                verdict = res.verdict.model_dump_json() if res.verdict is not None else None
                cached = CachedVerdict(
                    "ok",
                    verdict,
                    res.raw,
                    None,
                    res.prompt_tokens,
                    res.output_tokens,
                    res.note,
                    stored,
                    res.reached_unknown,
                    res.p_yes,
                    res.p_yes_unknown,
                    res.thought_cut,
                    cited,
                )
                out[k] = Outcome(
                    res.verdict, res.raw, key=k, note=res.note, **reach, **_confidence(res)
                )
            else:
                reason = res.failure.reason if res.failure else "unparsed"
                cached = CachedVerdict(
                    "unparsed",
                    None,
                    res.raw,
                    reason,
                    res.prompt_tokens,
                    res.output_tokens,
                    res.note,
                    stored,
                    res.reached_unknown,
                    thought_cut=res.thought_cut,
                    cited=cited,
                )
                out[k] = Outcome(
                    None,
                    res.raw,
                    unparsed=reason,
                    key=k,
                    note=res.note,
                    thought_cut=res.thought_cut,
                    **reach,
                )
                self.counters.unparsed += 1
            rows.append((k, self.stage, self.engine.identity, cached))
        self.cache.put_many(rows)
        return out

    def _reach(self, request: Request, res: Result) -> Result:
        """The engine's result, checked against what reached the model: a cited part that
        arrived short of the tokens the model's processor places for it (or, where the parts
        were not counted one by one, a cited modality of zero tokens) makes the call an error
        naming it, the model and the engine (a fluent verdict on evidence never seen is no
        verdict); media that could not be counted says so."""
        if res.error or not request.media:
            return res
        if res.cited is not None and len(res.cited) != len(request.media):
            # The engine was handed other parts than were cited (a holder that rewrote the
            # request): its counts cannot be lined up with the citations.
            res = dataclasses.replace(
                res,
                cited=None,
                cited_unknown=f"the engine counted {len(res.cited)} parts for "
                f"{len(request.media)} cited",
            )
        if res.reached is None and not res.reached_unknown:
            res = dataclasses.replace(
                res, reached_unknown="the engine does not report its prompt tokens"
            )
        if res.cited is None and not res.cited_unknown:
            res = dataclasses.replace(
                res,
                cited_unknown=res.reached_unknown
                or "the engine does not count tokens per citation",
            )
        if res.reached is None:
            return res
        preset = self.engine.preset
        kind = self.engine.kind
        model = preset.name if preset is not None else kind
        why = unreached(
            request,
            res.reached,
            model,
            kind,
            video_as_images=bool(preset is not None and preset.quirks.video_as_images),
            cited=res.cited,
        )
        if why is None:
            return res
        self.counters.unreached += 1
        return Result(
            error=why,
            raw=res.raw,
            prompt_tokens=res.prompt_tokens,
            output_tokens=res.output_tokens,
            reached=res.reached,
            cited=res.cited,
        )


def _cited_json(res: Result) -> str:
    """A result's per-citation reach as the cache stores it (`CachedVerdict.cited`)."""
    if res.cited is not None:
        return json.dumps({"parts": [c.as_list() for c in res.cited]})
    return json.dumps({"unknown": res.cited_unknown or "not counted"})


def _reach_unchecked(call: Call, v: CachedVerdict) -> bool:
    """Whether a cached verdict on media must be judged again: recorded before its cited parts
    were counted one by one (its media's tokens counted, its parts not), or its stored parts
    fall short under today's rule (a verdict that check would have made an error)."""
    if not call.media_keys or v.reached is None:
        return False  # nothing cited, or nothing counted then that could be checked now
    if v.cited is None:
        return True
    stored = json.loads(v.cited)
    if "parts" not in stored:
        return False
    parts = [CitedTokens.from_list(row) for row in stored["parts"]]
    return short(parts, json.loads(v.reached)) is not None


def build_requests(
    calls: Sequence[Call], stage: str, cut: bool = True, by_reference: bool = False
) -> list[Request | str]:
    """Requests for these calls of `stage` (each request carries it); a call whose media
    cannot be cut becomes its error text.
    With `cut=False` nothing is cut and the requests carry no media; with `by_reference`, a
    call's cited segments travel as references, cut by the engine where the data lives."""
    built: list[Request | str] = []
    for c in calls:
        if not cut:
            built.append(c.request((), stage))
            continue
        if by_reference and c.segments is not None:
            built.append(c.request(tuple(c.segments), stage))
            continue
        try:
            media = c.media() if c.media is not None else ()
        except Exception as e:
            built.append(f"could not cut the cited segment: {e}")
            continue
        built.append(c.request(tuple(media), stage))
    return built


def _from_cache(key: str, v: CachedVerdict, kind: type[Verdict] | None) -> Outcome:
    """The outcome exactly as it was judged: the stored verdict, never a re-parse of the raw
    text (a thinking judge's raw text starts with its reasoning, which the engine removed
    before parsing)."""
    reach: dict[str, Any] = {
        "reached": json.loads(v.reached) if v.reached is not None else None,
        "reached_unknown": v.reached_unknown,
        "cited_unknown": json.loads(v.cited).get("unknown") if v.cited else None,
    }
    if v.status == "ok":
        verdict = (
            kind.model_validate_json(v.verdict)
            if kind is not None and v.verdict is not None
            else None
        )
        return Outcome(verdict, v.raw, cached=True, key=key, note=v.note, **reach, **_confidence(v))
    return Outcome(
        None,
        v.raw,
        unparsed=v.reason or "unparsed",
        cached=True,
        key=key,
        note=v.note,
        thought_cut=v.thought_cut,
        **reach,
    )


def _confidence(v: Result | CachedVerdict) -> dict:
    """A verdict's p_yes (or why it has none) and whether its thought was cut, as judged."""
    return {"p_yes": v.p_yes, "p_yes_unknown": v.p_yes_unknown, "thought_cut": v.thought_cut}
