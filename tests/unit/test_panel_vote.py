"""Judge panels (`panel:M1,M2,...`): the vote against hand-made cases, panel specs and weights, and
the configurations that cannot be voted on. (Whole runs of panels: test_panel_runs.py.)"""

from __future__ import annotations

import pytest

from murgat_local.config import RunConfig
from murgat_local.judges.panel import Rule, members_of, reliability_weight, vote, weights_from_meta
from murgat_local.results import MetaEval

# ---------------------------------------------------------------- the vote, by hand

MAJORITY, WEIGHTED = Rule("majority"), Rule("weighted", (("a", 3.0), ("b", 1.0), ("c", 1.0)))


@pytest.mark.parametrize(
    "rule, answers, decision, tie",
    [
        (MAJORITY, {"a": True, "b": False, "c": True}, True, False),
        (MAJORITY, {"a": False, "b": True, "c": False}, False, False),
        (MAJORITY, {"a": True, "b": False}, False, True),  # a tie decides NO
        (MAJORITY, {"a": True, "b": False, "c": None}, False, True),  # c dropped out: a tie of two
        (MAJORITY, {"a": True, "b": None, "c": None}, True, False),
        (Rule("unanimous"), {"a": True, "b": True, "c": None}, True, False),
        (Rule("unanimous"), {"a": True, "b": False, "c": True}, False, False),
        (Rule("any"), {"a": False, "b": False, "c": True}, True, False),
        (Rule("any"), {"a": False, "b": None, "c": False}, False, False),
        (WEIGHTED, {"a": True, "b": False, "c": False}, True, False),  # 3 against 2
        (WEIGHTED, {"a": False, "b": True, "c": True}, False, False),
        (
            Rule("weighted", (("a", 2.0), ("b", 1.0), ("c", 1.0))),
            {"a": False, "b": True, "c": True},
            False,
            True,
        ),
    ],
)
def test_the_vote(rule, answers, decision, tie):
    t = vote(rule, answers)
    assert (t.yes, t.tie) == (decision, tie)
    assert t.dropped == sum(a is None for a in answers.values())
    assert t.votes_yes == sum(a is True for a in answers.values())


def test_a_vote_nobody_takes_part_in_decides_nothing():
    for rule in (MAJORITY, Rule("any"), Rule("unanimous"), WEIGHTED):
        t = vote(rule, {"a": None, "b": None, "c": None})
        assert t.yes is None and t.dropped == 3 and not t.tie


def test_panel_specs_and_weights():
    assert members_of("panel:a, b ,human:/x/l.jsonl") == ("a", "b", "human:/x/l.jsonl")
    for bad, why in (
        ("panel:a", "at least 2"),
        ("panel:a,,b", "empty member"),
        ("panel:a,b,a", "named twice"),
        ("panel:a,panel:b", "cannot itself be a panel"),
    ):
        with pytest.raises(ValueError, match=why):
            members_of(bad)
    assert reliability_weight(0.5) == 0.0 == reliability_weight(0.3)  # chance or worse: no say
    assert reliability_weight(0.9) == pytest.approx(2.1972, abs=1e-4)
    assert reliability_weight(1.0) == reliability_weight(0.99)
    # Two near-chance judges do not outvote a reliable one.
    w = {
        "good": reliability_weight(0.9),
        "m1": reliability_weight(0.55),
        "m2": reliability_weight(0.55),
    }
    assert vote(Rule("weighted", tuple(w.items())), {"good": True, "m1": False, "m2": False}).yes
    report = MetaEval.model_validate(
        {
            "runs": {
                "r1": {"judges": {"verifiable": "m1"}, "subtask1": {"balanced_accuracy": 0.9}},
                "r2": {"judges": {"verifiable": "m2"}, "subtask1": {"balanced_accuracy": 0.7}},
                "r3": {"judges": {"verifiable": "m2"}, "subtask1": {"balanced_accuracy": 0.9}},
            }
        }
    )
    assert weights_from_meta(report, "verifiable", ["m1", "m2"]) == pytest.approx(
        {"m1": reliability_weight(0.9), "m2": reliability_weight(0.8)}
    )
    with pytest.raises(ValueError, match="no run whose entail judge is 'm1'"):
        weights_from_meta(report, "entail", ["m1"])


def test_config_refuses_what_cannot_be_voted_on():
    with pytest.raises(ValueError, match="cannot be the decomposer: fact lists"):
        RunConfig(judge="panel:a,b,c")
    with pytest.raises(ValueError, match="needs weights"):
        RunConfig(judge="a", entailer="panel:a,b", panel={"vote": "weighted"})
    with pytest.raises(ValueError, match="no weight for b"):
        RunConfig(
            judge="a",
            entailer="panel:a,b",
            panel={"entail": {"vote": "weighted", "weights": {"a": 1}}},
        )
    cfg = RunConfig(
        judge="a",
        verifier="panel:a,b,c",
        entailer="panel:a,b",
        panel={"vote": "any", "entail": {"vote": "weighted", "weights": {"a": 1, "b": 2}}},
    )
    rules = cfg.panel_rules()
    assert rules["verifiable"] == (("a", "b", "c"), Rule("any"))
    assert rules["entail"][1].weights == (("a", 1.0), ("b", 2.0))
