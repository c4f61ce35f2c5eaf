"""`--dry-run`: how many judge calls each stage needs and how many the cache already holds.

The protocol is replayed with judges that answer from the cache only. A stage whose inputs
depend on verdicts not yet cached (facts come from decompositions) can only be counted as far
as the cache knows them; the plan says so with `complete: false`.
"""

from __future__ import annotations

import pathlib

from ..inputs.responses import read_responses
from ..stages import Stage
from .cascade import CascadeJudge
from .judging import Outcome, StageJudge
from .panel import PanelJudge
from .protocol import Protocol
from .routing import RoutedJudge
from .streaming import chunks

NOT_CACHED = "not cached (dry run)"


class CacheOnlyJudge(StageJudge):
    """Serves hits; every miss is counted and answered 'not cached' (no model is started)."""

    @staticmethod
    def _build(calls):
        return ["dry run: media not cut"] * len(calls)

    def _judge(self, keys, built):
        self.counters.errors += len(keys)
        return {k: Outcome(error=NOT_CACHED, key=k) for k in keys}


class CacheOnlyPanel(PanelJudge):
    """A panel of cache-only members; it decides only when every member's verdict is cached
    (a vote of the cached members alone could differ from the run's, and so would what follows)."""

    def _start_engines(self, calls):
        pass

    def _decide(self, call, members):
        if any(o.error == NOT_CACHED for _, o in members):
            return Outcome(error=NOT_CACHED, key="|".join(o.key for _, o in members))
        return super()._decide(call, members)


def _dry(stage: str, j):
    if isinstance(j, RoutedJudge):
        return RoutedJudge(stage, {r: (n, _dry(stage, m)) for r, (n, m) in j.judges.items()})
    if isinstance(j, CascadeJudge):  # the first judge's calls; escalations need its verdicts
        return _dry(stage, j.members[0])
    if isinstance(j, PanelJudge):
        return CacheOnlyPanel(
            stage, [(n, _dry(stage, m)) for n, m in zip(j.names, j.members)], j.rule
        )
    return CacheOnlyJudge(stage, j.engine, j.cache, batch_size=j.batch_size)


def _counts(c) -> dict:
    return {"calls": c.unique, "cached": c.cache_hits, "to_run": c.unique - c.cache_hits}


def plan(runner, responses: pathlib.Path) -> dict[str, dict]:
    dry = {stage: _dry(stage, j) for stage, j in runner.judges.items()}
    protocol = Protocol(runner.protocol.options, dry, runner.cutter, runner.protocol.prompts)
    for chunk in chunks(
        read_responses(responses, runner.config.limit, runner.config.inputs.limits()),
        runner.config.chunk_size,
    ):
        protocol.run(chunk)
    out: dict = {}
    for stage, j in dry.items():
        # A panel's calls are its members' (each cached under its own identity), counted apart.
        out[stage] = {**_counts(j.counters), "model": runner.config.stage_models()[stage]}
        if isinstance(j, PanelJudge):
            out[stage]["members"] = {n: _counts(m.counters) for n, m in zip(j.names, j.members)}
        if isinstance(j, RoutedJudge):  # each route cached under its own judge
            out[stage]["routes"] = {
                r: {"model": n, **_counts(m.counters)} for r, (n, m) in j.judges.items()
            }
    missing_upstream = out[Stage.DECOMPOSE]["to_run"] > 0 or out[Stage.VERIFIABLE]["to_run"] > 0
    out["complete"] = not missing_upstream
    return out


def extrapolate(
    counts: dict[str, dict], calibration: dict[str, dict], responses: int, sampled: int
) -> dict:
    """Estimated calls and hours per stage for the whole set, from a calibration on `sampled` of
    its `responses` responses. Pure.

    `counts`: the dry-run plan (calls and cached calls per stage, as far as the cache knows).
    `calibration`: per stage, the unique calls the sample needed and, for those the engine
    answered, the seconds per call. A stage whose plan is already known completely (nothing
    upstream is missing) keeps its exact counts; otherwise its calls are scaled from the sample.
    """
    out: dict = {"responses": responses, "calibrated_on": sampled, "stages": {}}
    total = 0.0
    unknown = []
    for stage, cal in calibration.items():
        exact = counts.get("complete") or stage in (Stage.DECONTEXT, Stage.VERIFIABLE)
        per = cal["calls"] / sampled if sampled else 0.0
        calls = counts[stage]["calls"] if exact else round(per * responses)
        cached = counts[stage]["cached"]
        to_run = max(calls - cached, 0)
        sec = cal.get("seconds_per_call")
        if sec is None and to_run:
            unknown.append(stage)
        hours = None if sec is None else to_run * sec / 3600
        total += hours or 0.0
        out["stages"][stage] = {
            "calls": calls,
            "exact": bool(exact),
            "cached": cached,
            "to_run": to_run,
            "calls_per_response": round(per, 3),
            "seconds_per_call": sec,
            "hours": None if hours is None else round(hours, 4),
        }
    out["hours"] = None if unknown else round(total, 4)
    if unknown:
        out["note"] = (
            f"no model call was timed for {', '.join(unknown)} (all its sample calls were cached or refused)"
        )
    return out


def estimate(runner, responses: pathlib.Path, counts: dict, sample: int) -> dict:
    """Judge the first `sample` responses for real (their verdicts are cached, so nothing is
    lost), time each stage's model calls with the engines already started, and extrapolate.
    Calibration batches are smaller than a real run's, so the estimate errs long."""
    limits = runner.config.inputs.limits()
    total = sum(1 for _ in read_responses(responses, runner.config.limit, limits))
    items = list(read_responses(responses, min(sample, total), limits))
    for judge in runner.judges.values():
        judge.engine.get()  # start-up is not a per-call cost
    before = {
        s: (j.counters.unique, j.counters.model_calls, j.counters.wall_s)
        for s, j in runner.judges.items()
    }
    runner.protocol.run(items)
    calibration = {}
    for stage, j in runner.judges.items():
        unique, calls, wall = (
            a - b
            for a, b in zip(
                (j.counters.unique, j.counters.model_calls, j.counters.wall_s), before[stage]
            )
        )
        calibration[stage] = {
            "calls": unique,
            "model_calls": calls,
            "seconds_per_call": round(wall / calls, 5) if calls else None,
        }
    return extrapolate(counts, calibration, total, len(items))
