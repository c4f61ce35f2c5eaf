"""One stage's judge calls: the cache gives back exactly what was judged."""

from __future__ import annotations

from support.fakes import OracleEngine

from murgat_local.engines.base import finish, record
from murgat_local.judges import load_prompt
from murgat_local.pipeline.cache import VerdictCache
from murgat_local.pipeline.judging import Call, StageJudge


class ThinkingEngine(OracleEngine):
    """Answers like a thinking judge: a reasoning block, then the constrained verdict."""

    def judge(self, requests):
        results = []
        for r in requests:
            self.seen.append(r)
            label = "YES" if "red" in r.prompt else "NO"
            raw = f'<think>The claim says {r.prompt[-12:]}; looking at it.</think>\n\n{{"label":"{label}"}}'
            results.append(finish(r, raw, 10, 30))
        record(self.stats, results)
        return results


def test_a_cached_thinking_verdict_comes_back_as_it_was_judged(tmp_path):
    tpl = load_prompt("verifiable")
    calls = [Call(tpl, tpl.render(sentence=s)) for s in ("The ball is red.", "So the answer is B.")]
    cache = VerdictCache(tmp_path / "c.sqlite")
    engine = ThinkingEngine()
    fresh = StageJudge("verifiable", engine, cache).run(calls)
    assert (
        [o.ok for o in fresh] == [True, True] and fresh[0].verdict.yes and not fresh[1].verdict.yes
    )
    resumed_judge = StageJudge("verifiable", engine, VerdictCache(tmp_path / "c.sqlite"))
    resumed = resumed_judge.run(calls)
    assert resumed_judge.counters.cache_hits == 2 and resumed_judge.counters.model_calls == 0
    for a, b in zip(fresh, resumed):
        assert b.cached and b.ok, b
        assert (a.verdict, a.raw, a.unparsed, a.error) == (b.verdict, b.raw, b.unparsed, b.error)
    assert len(engine.seen) == 2
