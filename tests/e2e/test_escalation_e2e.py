"""Escalation on real tiny engines (in-process vLLM): SmolLM2-135M judges verifiability (and
decomposes), the random-weight Qwen3-Omni thinker judges attribution; `--escalate-to` the thinker
sends it the verifiability verdicts SmolLM2 is not sure enough of, and the thinker's own unsure
attributions have nowhere further to go: abstained. `murgat annotate --abstained` asks exactly
those. The thresholds are hand-written in best.toml, between the confidences the judges really
give, so that some verdicts are kept, some escalated and some abstained; the verdicts themselves
mean nothing. Then people answer those questions (through annotate's own session, as its server
drives it), and a re-run that escalates further to `human:` the export decides each of them by
the answers."""

from __future__ import annotations

import json
import statistics

import pytest
from support.paths import ROOT, require_model

from murgat_local.annotate.questions import questions
from murgat_local.annotate.session import Session
from murgat_local.annotate.source import load_source
from murgat_local.annotate.store import Store
from murgat_local.config import RunConfig, load_config
from murgat_local.engines import close_all
from murgat_local.judges.cascade import confidence
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.records import yes_no_verdicts
from murgat_local.pipeline.runner import Runner
from murgat_local.results import ScoreRecord

pytestmark = [pytest.mark.engine, pytest.mark.slow]

SMALL, OMNI = "smollm2-135m-instruct", "tiny-qwen3-omni"


@pytest.fixture(scope="module")
def engines():
    for m in (SMALL, OMNI):
        require_model(m)
    shared: dict = {}
    yield shared
    close_all(shared.values())


def _run(cfg, media_root, out, responses, engines):
    runner = Runner(cfg, media_root, out, engines=engines, summary=RunSummary)
    try:
        result = runner.run(responses)
    finally:  # the engines outlive the run: the fixture closes them
        engines.update(runner.engines)
        runner.cutter.close()
        runner.cache.close()
    return result, [json.loads(line) for line in result.records_path.read_text().splitlines()]


def _verdicts(rec: dict):
    """`yes_no_verdicts` of a record line, each verdict as the line holds it."""
    for stage, where, v in yes_no_verdicts(ScoreRecord.model_validate(rec)):
        yield stage, where, v.model_dump(exclude_unset=True)


def _split(values):
    """A threshold some of `values` reach and some do not (thresholds start at 0.5; a decoded
    label's confidence may lie under it)."""
    values = sorted(set(values))
    assert len(values) >= 2, values
    above = [v for v in values if v >= 0.5]
    assert above, values
    return statistics.median_high(above) if len(above) > 2 else above[-1]


def test_an_escalated_run_and_its_abstained_questions(tmp_path, media_root, engines):
    rows = [json.loads(x) for x in (ROOT / "samples" / "responses.jsonl").read_text().splitlines()]
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    cache = tmp_path / "cache.sqlite"
    common = {"decontextualize": False, "max_failed_calls": 1.0, "bootstrap_resamples": 0}
    alone, recs = _run(
        RunConfig(judge=SMALL, entailer=OMNI, cache=cache, **common),
        media_root,
        tmp_path / "alone",
        responses,
        engines,
    )
    sure = {"verifiable": [], "entail": []}
    for rec in recs:
        for stage, _, v in _verdicts(rec):
            if v.get("p_yes") is not None:
                sure[stage].append(confidence(v["value"], v["p_yes"]))
    cut = {stage: _split(c) for stage, c in sure.items()}
    block = "target = 0.9\nalpha = 0.1\ncoverage = 0.5\nn = 50\n"
    best = tmp_path / "best.toml"

    def write_best() -> None:
        best.write_text(
            f'judge = "{SMALL}"\nentailer = "{OMNI}"\ndecontextualize = false\n'
            f'max_failed_calls = 1.0\nbootstrap_resamples = 0\ncache = "{cache}"\n'
            '[escalation]\nlabels = "people.jsonl"\n'
            f'[escalation.verifiable]\nthreshold = {cut["verifiable"]}\njudge = "{SMALL}"\n{block}'
            f'[escalation.entail]\nthreshold = {cut["entail"]}\njudge = "{OMNI}"\n{block}'
            # after SmolLM2 the thinker keeps every verifiability verdict whose decoded label it
            # gives 0.5 or more: the cascade `--escalate-to` reads (its own threshold alone is
            # not used in a cascade)
            f'[escalation.judges."{OMNI}".verifiable]\nthreshold = 0.5\n{block}'
            '[[escalation.cascades]]\nstage = "verifiable"\n'
            f'judges = ["{SMALL}", "{OMNI}"]\ntarget = 0.9\nalpha = 0.1\nn = 50\n'
            f'[[escalation.cascades.steps]]\njudge = "{SMALL}"\nthreshold = {cut["verifiable"]}\n'
            "coverage = 0.5\nn = 25\n"
            f'[[escalation.cascades.steps]]\njudge = "{OMNI}"\nthreshold = 0.5\n'
            "coverage = 1.0\nn = 25\n"
        )

    write_best()
    cfg = load_config(best, {"escalate_to": [OMNI]})  # as `murgat score --escalate-to` reads it
    _, probed = _run(cfg, media_root, tmp_path / "probe", responses, engines)
    # The escalated verifiability verdicts decide which facts reach attribution, so the facts
    # judged alone above may not be these (the thinker may rule a sentence unverifiable): the
    # attribution threshold is taken between the confidences of the facts this cascade
    # judges, and the run is made again, every verdict now from the cache.
    cut["entail"] = _split(
        [
            confidence(v["cascade"][0]["value"], v["cascade"][0]["p_yes"])
            for rec in probed
            for stage, _, v in _verdicts(rec)
            if stage == "entail" and v["cascade"][0]["p_yes"] is not None
        ]
    )
    write_best()
    cfg = load_config(best, {"escalate_to": [OMNI]})
    result, recs = _run(cfg, media_root, tmp_path / "escalated", responses, engines)
    assert result.exit_code == 0
    assert result.summary.stages["entail"].model_calls == 0  # the probe's verdicts
    cascade = {
        "verifiable": [(SMALL, cut["verifiable"]), (OMNI, 0.5)],
        "entail": [(OMNI, cut["entail"])],
    }

    seen = {"verifiable": {}, "entail": {}}
    abstained = {}
    for rec in recs:
        for stage, where, v in _verdicts(rec):
            steps = [(c["judge"], c["threshold"]) for c in v["cascade"]]
            assert steps == cascade[stage][: len(steps)]
            kept = [
                c["value"] is not None and confidence(c["value"], c["p_yes"]) >= c["threshold"]
                for c in v["cascade"]
            ]
            assert not any(kept[:-1])  # asked the next only when the one before escalated
            if kept[-1]:
                decider = v["cascade"][-1]
                assert v["decided_by"] == decider["judge"] and not v["abstained"]
                assert (v["value"], v["p_yes"]) == (decider["value"], decider["p_yes"])
            else:
                assert len(steps) == len(cascade[stage])  # every judge was asked
                assert v["abstained"] and v["value"] is None and v["decided_by"] is None
                assert v["error"].startswith("abstained")
                abstained.setdefault(rec["id"], []).append(where)
            who = v["decided_by"] or "abstained"
            seen[stage][who] = seen[stage].get(who, 0) + 1
        # an abstained verdict is never scored: its sentence or fact is unscored, says why
        for s in rec["trace"]["sentences"]:
            if s["verifiable"]["abstained"]:
                assert s["unscored"]
            for f in s.get("facts", []):
                if f["joint"]["abstained"]:
                    assert f["precision"] is None and "abstained" in f["unscored"]
    assert seen["verifiable"].get(SMALL) and seen["verifiable"].get(OMNI)
    assert seen["entail"].get(OMNI) and seen["entail"].get("abstained")
    cert = result.summary.certification
    for stage in ("verifiable", "entail"):
        c = cert[stage]
        judges = [j for j, _ in cascade[stage]]
        assert c.decided_by == {j: seen[stage].get(j, 0) for j in judges}
        assert c.abstained == seen[stage].get("abstained", 0)
        assert (c.target, c.alpha) == (0.9, 0.1)
        assert [j.judge for j in c.judges] == judges
    prov = result.summary.provenance.judges["verifiable"]
    assert prov.identity.startswith("cascade/2:")
    assert [j["threshold"] for j in prov.detail["judges"]] == [cut["verifiable"], 0.5]
    # The first judge's verdicts came from the cache; the thinker was asked only escalations.
    members = result.summary.stages["verifiable"].members
    assert members[SMALL].cache_hits == members[SMALL].unique
    assert members[OMNI].unique <= seen["verifiable"][OMNI]

    # `murgat annotate RUN --abstained`: exactly the abstained verdicts, nothing else
    src = load_source(tmp_path / "escalated", media_root, abstained=True)
    asked = {it.id: [q.suffix for q in questions(it, {})] for it in src.items}
    want = {}
    for rid, wheres in abstained.items():
        keys = []
        for where in wheres:
            if len(where) == 1:
                keys.append(f"s{where[0] + 1}.verifiable")
            elif where[2] == "joint":
                keys.append(f"s{where[0] + 1}.f{where[1] + 1}.entailed")
            else:
                k = int(where[2].split(".")[1])
                keys.append(f"s{where[0] + 1}.f{where[1] + 1}.c{k + 1}.precise")
        want[rid] = list(dict.fromkeys(keys))
    assert asked == want and sum(map(len, asked.values())) > 0

    _answer_and_rerun(tmp_path, media_root, responses, engines, src, best, recs)


def _people(kind: str, where: tuple) -> bool:
    """What the people answer (it means nothing; it differs from question to question)."""
    if kind == "verifiable":
        return True
    if kind == "entailed":
        return where[1] % 2 == 0
    return False  # no citation is needed: every necessity call is settled by the answers


def _answer_and_rerun(tmp_path, media_root, responses, engines, src, best, before):
    labels = tmp_path / "abstained.jsonl"
    session = Session(src, Store(tmp_path / "answers.sqlite"), "a1", labels=labels)
    expected = {}  # (id, where in the record) -> the verdict the answers settle
    while not (step := session.next())["done"]:
        q = step["question"]
        rid, _, suffix = q["key"].rpartition("#")
        where = tuple(int(w[1:]) - 1 for w in suffix.split(".")[:-1])
        value = _people(q["kind"], where)
        assert session.answer(q["key"], value)[0] == 200
        if q["kind"] == "verifiable":
            expected[(rid, where)] = value
        elif q["kind"] == "entailed":
            expected[(rid, (*where, "joint"))] = value
        else:  # not needed: alone it does not support; the others without it do
            i, j, k = where
            expected[(rid, (i, j, f"alone.{k}"))] = False
            expected[(rid, (i, j, f"without.{k}"))] = True
    written, left_out = session.close()
    assert written == len(src.items) and not left_out
    assert all("abstained" in json.loads(x) for x in labels.read_text().splitlines())

    human = f"human:{labels}"
    cfg = load_config(best, {"escalate_to": [OMNI, human]})
    result, recs = _run(cfg, media_root, tmp_path / "answered", responses, engines)
    assert result.exit_code == 0
    was = {(rec["id"], where) for rec in before for _, where, v in _verdicts(rec) if v["abstained"]}
    decided, left, counts = 0, 0, {}
    for rec in recs:
        assert rec.get("error") is None, rec.get("error")
        for stage, where, v in _verdicts(rec):
            who = v["decided_by"] or "abstained"
            c = counts.setdefault(stage, {})
            c[who] = c.get(who, 0) + 1
            if (rec["id"], where) in was:  # people answered it: decided by them, as they said
                assert v["decided_by"] == human and not v["abstained"], (rec["id"], where, v)
                if (rec["id"], where) in expected:
                    assert v["value"] == expected[(rec["id"], where)]
                decided += 1
            elif v["abstained"]:  # only what no one was asked (new since people's answers)
                assert v["cascade"][-1]["judge"] == human
                assert v["cascade"][-1]["error"].startswith("human labels: people gave no")
                left += 1
    assert decided == len(was) > 0
    cert = result.summary.certification
    for stage, c in counts.items():
        assert cert[stage].decided_by == {j.judge: c.get(j.judge, 0) for j in cert[stage].judges}
        assert cert[stage].abstained == c.get("abstained", 0)
        last = cert[stage].judges[-1].model_dump(exclude_unset=True)
        assert last == {"judge": human, "threshold": None, "certain": True}
    # the model judges' verdicts all came from the cache: no new engine, nothing re-judged
    members = result.summary.stages["verifiable"].members
    assert members[SMALL].cache_hits == members[SMALL].unique
