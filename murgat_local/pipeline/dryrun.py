"""`--dry-run`: how many judge calls each stage needs and how many the cache already holds.

The protocol is replayed with judges that answer from the cache only. A stage whose inputs
depend on verdicts not yet cached (facts come from decompositions) can only be counted as far
as the cache knows them; the plan says so with `complete: false`.
"""

from __future__ import annotations

import pathlib

from ..inputs.responses import read_responses
from .judging import Outcome, StageJudge
from .protocol import Protocol
from .runner import _chunks


class CacheOnlyJudge(StageJudge):
    """Serves hits; every miss is counted and answered 'not cached' (no model is started)."""

    @staticmethod
    def _build(calls):
        return ["dry run: media not cut"] * len(calls)

    def _judge(self, keys, built):
        self.counters.errors += len(keys)
        return {k: Outcome(error="not cached (dry run)", key=k) for k in keys}


def plan(runner, responses: pathlib.Path) -> dict[str, dict]:
    dry = {
        stage: CacheOnlyJudge(stage, j.engine, j.cache, batch_size=j.batch_size)
        for stage, j in runner.judges.items()
    }
    protocol = Protocol(runner.protocol.options, dry, runner.cutter, runner.protocol.prompts)
    for chunk in _chunks(read_responses(responses, runner.config.limit), runner.config.chunk_size):
        protocol.run(chunk)
    out = {}
    for stage, j in dry.items():
        c = j.counters
        out[stage] = {
            "calls": c.unique,
            "cached": c.cache_hits,
            "to_run": c.unique - c.cache_hits,
            "model": runner.config.stage_models()[stage],
        }
    missing_upstream = out["decompose"]["to_run"] > 0 or out["verifiable"]["to_run"] > 0
    out["complete"] = not missing_upstream
    return out
