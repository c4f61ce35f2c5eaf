"""Escalation (`murgat score --escalate-to`): the keep rule, the cascade over deterministic fake
judges, its validation in the config, and how a record and the summary show who decided."""

from __future__ import annotations

import json

import pytest
from support.fakes import FakeHolder

from murgat_local.config import RunConfig
from murgat_local.judges.calls import Call, Outcome
from murgat_local.judges.cascade import Step, confidence, decide
from murgat_local.judges.prompts import PromptTemplate
from murgat_local.judges.verdicts import YesNo
from murgat_local.pipeline.cascade import ABSTAINED, CascadeJudge
from murgat_local.pipeline.judging import StageCounters
from murgat_local.pipeline.records import _verdict, certification_counts


def test_the_keep_rule():
    assert confidence(0.2) == pytest.approx(0.8) and confidence(None) is None
    first = Step("a", 0.8)
    assert first.keeps(True, 0.85) and first.keeps(False, 0.2)  # confidence 0.8: kept
    assert not first.keeps(True, 0.7)  # under the threshold
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
    rec = {
        "trace": {
            "sentences": [
                {"verifiable": _verdict(o), "facts": [{"joint": _verdict(outs[2])}]} for o in outs
            ]
        }
    }
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


def _config(**kw):
    escalation = {
        "labels": "people.jsonl",
        "verifiable": {"threshold": 0.8, "target": 0.9, "alpha": 0.1, "coverage": 0.5, "n": 40},
        "entail": {"threshold": None, "target": 0.9, "alpha": 0.1, "coverage": 0.0, "n": 30},
        "judges": {
            "big": {
                "verifiable": {
                    "threshold": 0.7,
                    "target": 0.9,
                    "alpha": 0.1,
                    "coverage": 0.8,
                    "n": 40,
                }
            }
        },
    }
    return RunConfig(judge="small", escalation=escalation, **kw)


def test_the_config_resolves_each_judges_threshold_per_stage():
    cascades = _config(escalate_to=["big", "human:p.jsonl"]).cascades()
    assert cascades["verifiable"] == [
        Step("small", 0.8),
        Step("big", 0.7),
        Step("human:p.jsonl", None, True),
    ]
    # big has no certified entailment threshold: it escalates every entailment it sees.
    assert cascades["entail"] == [
        Step("small", None),
        Step("big", None),
        Step("human:p.jsonl", None, True),
    ]
    assert _config().cascades() == {}
    # A judge is not asked again what it was not sure of: where it judges the stage itself, its
    # uncertain verdicts have nowhere further to go.
    own = _config(entailer="big", escalate_to=["big"]).cascades()
    assert own["verifiable"] == [Step("small", 0.8), Step("big", 0.7)]
    assert own["entail"] == [Step("big", None)]


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"escalate_to": ["other"]}, "certifies no threshold for it (certified: 'big')"),
        ({"escalate_to": ["big", "big"]}, "names big twice"),
        ({"escalate_to": ["big"], "entailer_audio": "x"}, "not supported"),
    ],
)
def test_the_config_refuses_a_cascade_it_cannot_certify(kw, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        _config(**kw)


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
