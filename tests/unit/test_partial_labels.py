"""`human:PATH` over `murgat annotate RUN --abstained`'s export: people's answers to the verdicts
a run abstained on, matched by the texts they were asked about. Pure: no engine, no media."""

from __future__ import annotations

import json

from support.fakes import FakeHolder

from murgat_local.annotate.export import label_record
from murgat_local.annotate.source import Item, Proposal, Sentence
from murgat_local.engines.base import Request
from murgat_local.judges.evidence import describe_evidence
from murgat_local.judges.human import HumanLabels
from murgat_local.judges.human_partial import settle
from murgat_local.judges.prompts import load_prompt
from murgat_local.judges.verdicts import AtomicFacts, YesNo
from murgat_local.stages import Stage
from murgat_local.text.citations import parse_citations, strip_citations
from murgat_local.text.labels import read_labels
from murgat_local.text.partial_labels import PartialFact

TWO = "The screen is red (visual, 0:00; visual, 0:01)."
ONE = "The screen turns green (visual, 0:01)."
FACT = "The screen is red."


def _item(ask, texts=(TWO, ONE, "Therefore A.")):
    sentences = tuple(
        Sentence(
            t,
            strip_citations(t) or t,
            tuple(parse_citations(t)),
            Proposal(None, (strip_citations(t).strip(),)) if parse_citations(t) else None,
        )
        for t in texts
    )
    return Item(0, "r1", "colors", None, sentences, ask=tuple(ask))


def _write(tmp_path, *records):
    path = tmp_path / "abstained.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _exported(tmp_path, answers):
    """The export line annotate writes for these answers (its own code)."""
    record, why = label_record(_item(list(answers)), answers, "a1")
    assert why is None and "abstained" in record
    return _write(tmp_path, record)


def _verifiable(engine, text, item="r1"):
    prompt = load_prompt("verifiable").render(sentence=strip_citations(text))
    return engine.judge([Request(prompt, YesNo, item=item, stage="verifiable")])[0]


def _entail(engine, fact, text, cited, item="r1"):
    cits = [parse_citations(text)[k] for k in cited]
    prompt = load_prompt("entail").render(evidence=describe_evidence(cits), fact=fact)
    return engine.judge([Request(prompt, YesNo, item=item, stage="entail")])[0]


def _yes(result):
    assert result.error is None, result.error
    return result.verdict.yes


def test_answers_exported_by_annotate_answer_exactly_their_questions(tmp_path):
    path = _exported(
        tmp_path,
        {"s2.verifiable": True, "s1.f1.entailed": True, "s1.f1.c2.precise": False},
    )
    labels, errors = read_labels(path)
    assert errors == [] and list(labels) == ["r1"]
    engine = HumanLabels(path)
    assert engine.check_response("r1", [TWO, ONE, "Therefore A."]) is None
    assert _yes(_verifiable(engine, ONE)) is True
    # asked about sentence 2 only: sentence 1 is refused, passed on
    assert "no verifiability answer" in _verifiable(engine, TWO).error
    assert _yes(_entail(engine, FACT, TWO, [0, 1])) is True  # joint: entailed
    # c2 is not needed: alone it does not support; c1 without it does (so c1 is needed)
    assert _yes(_entail(engine, FACT, TWO, [1])) is False
    assert _yes(_entail(engine, FACT, TWO, [0])) is True
    assert _verifiable(engine, ONE, item="r2").error.startswith("human labels: response 'r2'")


def test_an_unknown_question_or_unsettled_call_is_refused(tmp_path):
    engine = HumanLabels(_exported(tmp_path, {"s1.f1.c1.precise": True, "s2.verifiable": "unsure"}))
    # unsure is no answer
    assert "no verifiability answer" in _verifiable(engine, ONE).error
    # a fact people were not asked about
    assert "no answer about the fact" in _entail(engine, "The sky is blue.", TWO, [0]).error
    # the joint call needs an `entailed` answer
    assert "were not asked" in _entail(engine, FACT, TWO, [0, 1]).error
    # c1 is needed; whether c1 alone supports depends on c2, not asked: unsettled
    assert "do not settle" in _entail(engine, FACT, TWO, [0]).error
    # c2 without c1 never supports the fact
    assert _yes(_entail(engine, FACT, TWO, [1])) is False
    # decomposition is never answered from these answers
    prompt = load_prompt("decompose").render(sentence=strip_citations(TWO))
    out = engine.judge([Request(prompt, AtomicFacts, item="r1", stage="decompose")])[0]
    assert "no decomposition" in out.error


def test_the_stage_a_request_carries_tells_alike_prompts_apart(tmp_path):
    """A prompt that fences both a sentence and a claim (a custom entail template that shows
    the sentence as context) is answered as the stage that sends it: reading the stage off the
    prompt's fences took every such call for a verifiability question."""
    engine = HumanLabels(_exported(tmp_path, {"s1.verifiable": True, "s1.f1.entailed": False}))
    cits = parse_citations(TWO)
    entail = load_prompt("entail").render(evidence=describe_evidence(cits), fact=FACT)
    prompt = f"<<<SENTENCE\n{strip_citations(TWO)}\nSENTENCE>>>\n{entail}"
    asked = [Request(prompt, YesNo, item="r1", stage=s) for s in (Stage.VERIFIABLE, Stage.ENTAIL)]
    verifiable, entailed = engine.judge(asked)
    assert _yes(verifiable) is True
    assert _yes(entailed) is False
    # a request no scoring stage sends is refused, whatever its prompt holds
    [other] = engine.judge([Request(prompt, YesNo, item="r1", stage="generate")])
    assert "only the scoring stages" in other.error


def test_answers_about_another_sentence_are_a_per_response_error(tmp_path):
    path = _exported(tmp_path, {"s2.verifiable": False})
    engine = HumanLabels(path)
    other = [TWO, "The screen turns blue (visual, 0:02).", "Therefore A."]
    why = engine.check_response("r1", other)
    assert "sentence 2" in why and "not about these sentences" in why
    assert "has 1 sentences" in engine.check_response("r1", [TWO])
    # in a cascade a response the file lacks is passed on, not an error
    assert engine.check_response("r9", other, member=True) is None
    assert "not in the labels" in engine.check_response("r9", other)
    # same verifiable call for a sentence that reads otherwise: refused, never attached
    assert "no verifiability answer" in _verifiable(engine, other[1]).error


def test_rows_that_do_not_hold_together_make_the_line_unusable(tmp_path):
    good = {"question": "s1.f1.c2.precise", "kind": "precise", "sentence": TWO, "fact": FACT}
    bad = [
        {**good, "citation": "visual, 0:05"},  # not the sentence's 2nd citation
        {**good, "citation": "visual, 0:01", "question": "s1.f1.c3.precise"},  # no 3rd
        {**good, "question": "s1.f1.verifiable", "kind": "verifiable"},
        {**good, "citation": "visual, 0:01", "kind": "entailed"},
        {**good, "citation": "visual, 0:01", "answer": "maybe"},
        {**good, "citation": "visual, 0:01", "fact": ""},
    ]
    cit = parse_citations(TWO)[1].raw
    recs = [{"id": f"b{n}", "abstained": [r]} for n, r in enumerate(bad)]
    recs.append({"id": "ok", "abstained": [{**good, "citation": cit, "answer": True}]})
    recs.append(
        {
            "id": "twice",
            "abstained": [
                {"question": "s1.verifiable", "sentence": TWO, "answer": True},
                {"question": "s1.verifiable", "sentence": TWO, "answer": True},
            ],
        }
    )
    labels, errors = read_labels(_write(tmp_path, *recs))
    assert list(labels) == ["ok"]
    reasons = {e.id: e.reason for e in errors}
    assert "citation 2 of the sentence is" in reasons["b0"] and "visual, 0:05" in reasons["b0"]
    assert "does not exist (2)" in reasons["b1"]
    assert "not how a verifiable question is numbered" in reasons["b2"]
    assert "does not match question" in reasons["b3"]
    assert "'answer' must be" in reasons["b4"]
    assert "field 'fact'" in reasons["b5"]
    assert "the same question twice" in reasons["twice"]
    engine = HumanLabels(_write(tmp_path, *recs))
    assert "unusable" in engine.check_response("b0", [TWO], member=True)


def test_settle_answers_only_what_every_completion_agrees_on():
    f = PartialFact(0, FACT, True, ((0, False),))
    assert settle(f, 2, frozenset({0})) is False  # not needed: alone it never supports
    assert settle(f, 2, frozenset({1})) is True  # with 2, the other is then needed
    assert settle(f, 3, frozenset({1, 2})) is True  # P within {1, 2}, or empty with 2 left
    assert isinstance(settle(f, 3, frozenset({1})), str)
    assert settle(PartialFact(0, FACT, False), 3, frozenset({0})) is False
    needed = PartialFact(0, FACT, None, ((1, True),))
    assert settle(needed, 3, frozenset({0, 2})) is False  # without a needed one: never
    assert isinstance(settle(needed, 3, frozenset({0, 1, 2})), str)  # joint: not asked
    both = PartialFact(0, FACT, True, ((0, True), (1, True)))
    assert settle(both, 2, frozenset({0})) is False and settle(both, 2, frozenset({0, 1}))


def test_a_cascade_checks_its_human_member_against_each_response(tmp_path):
    from murgat_local.judges.cascade import Step
    from murgat_local.pipeline.cascade import CascadeEngine

    class Model(FakeHolder):
        identity, kind, started = "m", "vllm", False

    human = HumanLabels(_exported(tmp_path, {"s2.verifiable": False}))
    cascade = CascadeEngine([Step("m", 0.9), Step("human:x", None, True)], [Model(), human])
    assert cascade.check_response("r1", [TWO, ONE, "Therefore A."]) is None
    assert cascade.check_response("r9", [TWO]) is None  # not asked about: passed on
    why = cascade.check_response("r1", [TWO, "Another sentence.", "Therefore A."])
    assert why.startswith("cascade judge human:x: people answered about sentence 2")
