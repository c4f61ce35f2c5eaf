"""Escalation (`murgat score --escalate-to`): the keep rule, the cascade over deterministic fake
judges, its validation in the config, and how a record and the summary show who decided."""

from __future__ import annotations

import json

import pytest
from support.fakes import FakeHolder
from support.named_keys import assert_read_whole

from murgat_local.config import RunConfig
from murgat_local.judges.calls import Call, Outcome
from murgat_local.judges.cascade import Step, confidence, decide
from murgat_local.judges.prompts import PromptTemplate
from murgat_local.judges.verdicts import YesNo
from murgat_local.pipeline.cascade import ABSTAINED, CascadeJudge
from murgat_local.pipeline.judging import StageCounters
from murgat_local.pipeline.records import _verdict, certification_counts
from murgat_local.results import ScoreRecord, Summary


def test_the_keep_rule():
    assert confidence(False, 0.2) == pytest.approx(0.8) and confidence(True, None) is None
    # the probability of the label decoded, not of the likelier one: a YES spelt in two tokens
    # can decode with p_yes 0.45, and is a YES at confidence 0.45, not a NO at 0.55
    assert confidence(True, 0.45) == 0.45 and confidence(None, 0.9) is None
    first = Step("a", 0.8)
    assert first.keeps(True, 0.85) and first.keeps(False, 0.2)  # confidence 0.8: kept
    assert not first.keeps(True, 0.7)  # under the threshold
    assert not first.keeps(True, 0.15) and not Step("c", 0.5).keeps(True, 0.45)
    assert not first.keeps(True, None)  # no p_yes: nothing to certify
    assert not first.keeps(None, 0.99)  # no verdict
    assert not Step("b", None).keeps(True, 1.0)  # nothing certified: everything escalates
    human = Step("human:x", None, certain=True)
    assert human.keeps(False, 0.0) and not human.keeps(None, None)
    steps = [first, Step("b", 0.6), human]
    assert decide(steps, [(True, 0.9)]) == 0
    assert decide(steps, [(True, 0.7), (False, 0.35)]) == 1
    assert decide(steps, [(True, 0.7), (False, 0.45), (True, 1.0)]) == 2
    assert decide(steps, [(True, 0.7), (False, 0.45), (None, None)]) is None


class _Engine(FakeHolder):
    started = False

    def __init__(self, name):
        self.identity = f"fake:{name}"


class FakeJudge:
    """A stage judge whose answer per call (by its user text) is given: (yes, p_yes), or None
    for no verdict. It records the calls it is asked."""

    def __init__(self, name, answers):
        self.engine = _Engine(name)
        self.answers = answers
        self.asked: list[str] = []
        self.counters = StageCounters()
        self.cache, self.batch_size, self.on_progress = None, 8, None

    def run(self, calls):
        self.asked += [c.user for c in calls]
        self.counters.unique += len({c.user for c in calls})
        out = []
        for c in calls:
            a = self.answers[c.user]
            key = f"{self.engine.identity}|{c.user}"
            if a is None:
                self.counters.failed += 1
                out.append(Outcome(unparsed="no JSON", key=key))
            else:
                yes, p = a
                out.append(Outcome(YesNo(label="YES" if yes else "NO"), "raw", key=key, p_yes=p))
        return out


TPL = PromptTemplate("t", "system", "{x}", YesNo, "d")


def _calls(*users):
    return [Call(TPL, u) for u in users]


def test_a_cascade_asks_each_judge_only_what_the_one_before_escalated():
    a = FakeJudge("a", {"s1": (True, 0.95), "s2": (True, 0.6), "s3": (False, 0.3), "s4": None})
    b = FakeJudge("b", {"s2": (False, 0.1), "s3": (True, 0.55), "s4": (True, 0.9)})
    cascade = CascadeJudge("verifiable", [(Step("a", 0.8), a), (Step("b", 0.75), b)])
    outs = cascade.run(_calls("s1", "s2", "s3", "s4", "s1"))
    assert a.asked == ["s1", "s2", "s3", "s4", "s1"] and b.asked == ["s2", "s3", "s4"]
    decided = [o.cascade["decided_by"] for o in outs]
    assert decided == ["a", "b", None, "b", "a"]
    assert [o.verdict.yes if o.ok else None for o in outs] == [True, False, None, True, True]
    assert outs[1].p_yes == 0.1  # the deciding judge's own confidence
    abstained = outs[2]
    assert not abstained.ok and abstained.error == ABSTAINED and abstained.verdict is None
    assert [s.judge for s, _ in abstained.cascade["asked"]] == ["a", "b"]
    counters = cascade.counters.as_dict()
    assert counters["decided"] == {"a": 1, "b": 2} and counters["abstained"] == 1  # unique calls
    assert counters["members"]["b"]["unique"] == 3
    # The decision is keyed by both judges' verdicts and the thresholds, not cached by itself.
    assert outs[0].key == outs[4].key != outs[1].key
    record = _verdict(outs[2])
    assert record["value"] is None and record["abstained"] is True
    assert record["decided_by"] is None and record["error"] == ABSTAINED
    assert [(c["judge"], c["threshold"], c["value"], c["p_yes"]) for c in record["cascade"]] == [
        ("a", 0.8, False, 0.3),
        ("b", 0.75, True, 0.55),
    ]
    kept = _verdict(outs[3])
    assert kept["value"] is True and kept["decided_by"] == "b" and kept["abstained"] is False
    assert kept["cascade"][0]["unparsed"] == "no JSON"
    # Counted per verdict in a record: the summary's numbers are the records'.
    rec = ScoreRecord.model_validate(
        {
            "trace": {
                "sentences": [
                    {"verifiable": _verdict(o), "facts": [{"joint": _verdict(outs[2])}]}
                    for o in outs
                ]
            }
        }
    )
    assert certification_counts(rec) == {
        "verifiable": {"decided_by": {"a": 2, "b": 2}, "abstained": 1},
        "entail": {"decided_by": {}, "abstained": 5},
    }


def test_a_human_member_is_certain_and_its_refusals_are_not_failed_calls():
    a = FakeJudge("a", {"s1": (True, 0.6), "s2": (False, 0.4)})
    h = FakeJudge("h", {"s1": (False, 0.0), "s2": None})  # s2: not in the labels
    cascade = CascadeJudge("entail", [(Step("a", 0.9), a), (Step("human:h", None, True), h)])
    outs = cascade.run(_calls("s1", "s2"))
    assert [o.cascade["decided_by"] for o in outs] == ["human:h", None]
    assert h.counters.failed == 1 and cascade.counters.failed == 0


def _stage(threshold, n=40):
    return {"threshold": threshold, "target": 0.9, "alpha": 0.1, "coverage": 0.5, "n": n}


def _cascade(stage, steps):
    return {
        "stage": stage,
        "judges": [j for j, _ in steps],
        "target": 0.9,
        "alpha": 0.1,
        "n": 60,
        "steps": [{"judge": j, "threshold": t, "coverage": 0.5, "n": 30} for j, t in steps],
    }


def _config(**kw):
    escalation = {
        "labels": "people.jsonl",
        "verifiable": _stage(0.8),
        "entail": _stage(None, 30),
        "judges": {"big": {"verifiable": _stage(0.7)}},
        # big after small, certified on what small escalates: its own threshold alone (0.7) is
        # not what holds there
        "cascades": [_cascade("verifiable", [("small", 0.83), ("big", 0.91)])],
    }
    return RunConfig(judge="small", escalation=escalation, **kw)


def test_the_config_takes_each_judges_threshold_from_the_certified_cascade():
    config = _config(escalate_to=["big", "human:p.jsonl"])
    cascades = config.cascades()
    assert cascades["verifiable"] == [
        Step("small", 0.83),
        Step("big", 0.91),
        Step("human:p.jsonl", None, True),
    ]
    # No cascade small -> big certified for entailment: small keeps what its own certificate
    # keeps (none here), big keeps nothing, people decide, and the run says so.
    assert cascades["entail"] == [
        Step("small", None),
        Step("big", None),
        Step("human:p.jsonl", None, True),
    ]
    notes = config.cascade_notes()
    assert list(notes) == ["entail"]
    assert "no certified cascade small -> big" in notes["entail"]
    assert "big keep nothing" in notes["entail"]
    assert _config().cascades() == {} and _config().cascade_notes() == {}
    # People only after the judge: its own threshold, nothing to look up.
    alone = _config(escalate_to=["human:p.jsonl"])
    assert alone.cascades()["verifiable"] == [Step("small", 0.8), Step("human:p.jsonl", None, True)]
    assert alone.cascade_notes() == {}
    # A judge is not asked again what it was not sure of: where it judges the stage itself, its
    # uncertain verdicts have nowhere further to go.
    own = _config(entailer="big", escalate_to=["big"]).cascades()
    assert own["verifiable"] == [Step("small", 0.83), Step("big", 0.91)]
    assert own["entail"] == [Step("big", None)]
    # An order with no certificate (another judge, or these in another order): later judges
    # keep nothing.
    other = _config(escalate_to=["other"])
    assert other.cascades()["verifiable"] == [Step("small", 0.8), Step("other", None)]
    assert "certified: small -> big" in other.cascade_notes()["verifiable"]


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"escalate_to": ["big", "big"]}, "names big twice"),
        ({"escalate_to": ["big"], "entailer_audio": "x"}, "not supported"),
    ],
)
def test_the_config_refuses_a_cascade_it_cannot_run(kw, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        _config(**kw)


def test_cascade_tables_are_validated():
    from murgat_local.panel_config import EscalationConfig

    ok = _cascade("verifiable", [("a", 0.8), ("b", None)])
    assert EscalationConfig.model_validate({"cascades": [ok]}).cascade("verifiable", ["a", "b"])
    for bad in (
        {**ok, "judges": ["a", "c"]},  # steps for other judges
        {**ok, "judges": ["a"], "steps": ok["steps"][:1]},  # one judge is no cascade
        _cascade("verifiable", [("a", 0.8), ("a", 0.9)]),
        _cascade("decompose", [("a", 0.8), ("b", 0.9)]),
        _cascade("entail", [("a", 0.4), ("b", 0.9)]),  # under 0.5
    ):
        with pytest.raises(ValueError):
            EscalationConfig.model_validate({"cascades": [bad]})
    with pytest.raises(ValueError, match="twice"):
        EscalationConfig.model_validate({"cascades": [ok, ok]})


def test_escalation_needs_thresholds_certified_for_this_judge():
    with pytest.raises(ValueError, match=r"needs certified thresholds"):
        RunConfig(judge="small", escalate_to=["big"])
    stage = {"threshold": 0.8, "target": 0.9, "alpha": 0.1, "coverage": 0.5, "n": 4}
    with pytest.raises(ValueError, match=r"certified for 'other'.*judge is 'small'"):
        RunConfig(
            judge="small",
            escalate_to=["human:p.jsonl"],
            escalation={"verifiable": {**stage, "judge": "other"}},
        )
    with pytest.raises(ValueError, match=r"unknown stage\(s\) \['decompose'\]"):
        RunConfig(judge="small", escalation={"judges": {"big": {"decompose": stage}}})


def test_the_cli_refuses_escalation_without_thresholds_before_any_engine(tmp_path, media_root):
    from typer.testing import CliRunner

    from murgat_local.cli import app

    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"id": "x", "video": "v.mp4", "generation": "a"}) + "\n")
    res = CliRunner().invoke(
        app,
        ["score", str(responses), "--media-root", str(media_root), "--out", str(tmp_path / "o")]
        + ["--judge", "nowhere", "--escalate-to", "big"],
    )
    assert res.exit_code == 2 and "needs certified thresholds" in res.output


def test_a_run_whose_cascade_no_certificate_covers_says_so(tmp_path, media_root):
    from support.fakes import OracleEngine
    from support.meta_runs import RESPONSES

    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline.runner import Runner

    rows = tmp_path / "r.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": i, "video": "colors", "model_generation": g}) + "\n"
            for i, g in RESPONSES[:2]
        )
    )
    config = RunConfig(
        judge="oracle",
        decontextualize=False,
        bootstrap_resamples=0,
        escalation={"verifiable": _stage(0.8)},
        escalate_to=["other"],
    )
    engines = {"oracle": OracleEngine(), "other": OracleEngine("other")}
    runner = Runner(config, media_root, tmp_path / "out", engines=engines, summary=RunSummary)
    try:
        result = runner.run(rows)
    finally:
        runner.close()
    summary = result.summary
    # a cascade's counters and certification: every key named, written back as read
    assert_read_whole(result.summary_path, Summary)
    assert [w for w in summary.warnings or () if "no certified cascade oracle -> other" in w]
    cert = (summary.certification or {})["verifiable"]
    assert cert.certified is False
    assert [j.model_dump(exclude_unset=True) for j in cert.judges or ()] == [
        {"judge": "oracle", "threshold": 0.8},
        {"judge": "other", "threshold": None},
    ]
    # the oracle gives no p_yes, so it keeps nothing; other keeps nothing uncertified: abstained
    assert cert.decided_by == {"oracle": 0, "other": 0}
    assert cert.abstained == cert.verdicts > 0
