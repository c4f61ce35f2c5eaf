import re

from murgat_local.engines.base import finish
from murgat_local.engines.constraints import ParseFailure, parse_verdict
from murgat_local.judges import AtomicFacts, JudgeRequest, ReasonedYesNo, YesNo


def test_grammars_are_escape_free_and_bounded():
    assert re.fullmatch(YesNo.regex(), '{"label":"NO"}')
    assert not re.fullmatch(YesNo.regex(), '{"label": "NO"}')  # no whitespace to run away in
    facts = AtomicFacts.regex()
    assert re.fullmatch(facts, '{"facts":["A man waves.","He smiles."]}')
    assert not re.fullmatch(facts, '{"facts":["a\\nb"]}')  # no escapes, no control characters
    assert not re.fullmatch(facts, '{"facts":["' + "x" * 121 + '"]}')
    assert re.fullmatch(ReasonedYesNo.regex(), '{"reason":"red frame","label":"YES"}')


def test_truncated_output_is_a_failure_with_its_raw_text_never_a_no():
    res = finish(JudgeRequest("x", YesNo), '{"label":"N', 3, 16)
    assert res.verdict is None and isinstance(res.failure, ParseFailure)
    assert res.raw == '{"label":"N' and "truncated" in res.failure.reason
    assert isinstance(parse_verdict(AtomicFacts, '{"facts":[]}'), ParseFailure)


def test_a_thinking_judge_is_parsed_after_its_reasoning():
    res = finish(
        JudgeRequest("x", YesNo), '<think>The frame is red, so yes.</think>\n{"label":"YES"}', 3, 30
    )
    assert res.ok and res.verdict.yes
