"""Where p_yes is read: the letter decided over a split quote, top alternatives that may leave
a legal token out, and how many alternatives a route asks for, counted from the verdict's
grammar and the tokenizer (checked against outlines-core's own index of the same grammar).
The engines' p_yes across routes is compared on real engines in test_p_yes_routes.py."""

from __future__ import annotations

import math

import pytest
from support.paths import require_model

from murgat_local.engines import Request, load_preset
from murgat_local.engines.confidence import (
    LABEL_KEY,
    MAX_TOP_LOGPROBS,
    Step,
    legal_after,
    legal_where_decided,
    p_yes,
)
from murgat_local.engines.logprobs import LabelTokens, from_openai, from_vllm
from murgat_local.judges import YesNo
from murgat_local.judges.verdicts import ReasonedYesNo

L = math.log


def plain(*tokens: str) -> list[Step]:
    return [Step(t, ((t, 0.0),), 0.0) for t in tokens]


def test_a_label_split_after_a_lone_quote_is_read_where_its_letter_is_decided():
    """The quote alone at one step, then the letter: the step of the quote already gives YES or
    NO their share (`"Y`, `"N`), and the letter's step decides the rest. Exactly:
    P(YES) = P("Y) + P(") P(Y | ")  over what is legal there. Each step's numbers carry their
    own constant (logits): the value does not see it."""
    quote = Step(
        '"', (('"', L(0.5) + 3.0), ('"Y', L(0.3) + 3.0), ('"N', L(0.1) + 3.0)), L(0.5) + 3.0
    )
    letter = Step(
        "Y", (("Y", L(0.6) - 1.0), ("YES", L(0.2) - 1.0), ("N", L(0.2) - 1.0)), L(0.6) - 1.0
    )
    steps = [*plain('{"label":'), quote, letter, *plain('ES"}')]
    exact = (0.3 + 0.5 * 0.8) / (0.3 + 0.1 + 0.5)
    assert p_yes(steps) == (pytest.approx(exact), None)
    # Read at the letter alone (one step late) it was 0.8.
    assert exact != pytest.approx(0.8)
    # Without a "Y or "N alternative at the quote, the letter's step decides it all.
    bare = Step('"', (('"', 0.0), ("x", -math.inf)), 0.0)
    assert p_yes([*plain('{"label":'), bare, letter, *plain('ES"}')]) == (pytest.approx(0.8), None)
    # The quote and the letter in one token: a lone quote beside it decides nothing there.
    joint = Step('"Y', (('"', L(0.5)), ('"Y', L(0.3)), ('"N', L(0.1))), L(0.3))
    assert p_yes([*plain('{"label":'), joint, *plain('ES"}')]) == (pytest.approx(0.75), None)


def test_top_alternatives_that_may_leave_a_legal_token_out_give_no_p_yes():
    """The top k alternatives hold every legal token only where one of them is masked (-inf):
    the grammar's tokens rank first. Where none is, p_yes is unknown, not a renormalisation over
    the ones that came back; so at a split quote's step too."""
    masked = {"token": "x", "logprob": -9999.0}  # how the server writes one
    head = [
        {"token": t, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": 0.0}, masked]}
        for t in ('{"', "label", '":"')
    ]
    tops = [("YES", -0.4), ("NO", -1.6), ("Y", -2.0)]
    entry = {
        "token": "YES",
        "logprob": -0.4,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops],
    }
    tail = {"token": '"}', "logprob": 0.0, "top_logprobs": [{"token": '"}', "logprob": 0.0}]}
    choice = {"logprobs": {"content": [*head, entry, tail]}}
    value, why = p_yes(from_openai(choice, top=3))
    assert value is None and "3" in why and "masked" in why
    # One more asked for, and a masked one (the server writes -inf as -9999) is among them.
    entry["top_logprobs"].append({"token": "{", "logprob": -9999.0})
    yes = math.exp(-0.4) + math.exp(-2.0)
    assert p_yes(from_openai(choice, top=4)) == (pytest.approx(yes / (yes + math.exp(-1.6))), None)
    # Asked for the label tokens themselves (no top k): every one came back.
    entry["top_logprobs"].pop()
    assert p_yes(from_openai(choice))[0] == pytest.approx(yes / (yes + math.exp(-1.6)))
    # vLLM in process and Ray: the same rule on its maps (token id -> logprob, text).
    lp = lambda v, t: {"logprob": v, "decoded_token": t}  # noqa: E731
    ids = [1, 2, 3, 10, 20]
    maps = [{1: lp(0.0, '{"'), 9: lp(-math.inf, "x")}, {2: lp(0.0, "label"), 9: lp(-math.inf, "x")}]
    maps += [{3: lp(0.0, '":"'), 9: lp(-math.inf, "x")}]
    maps += [{10: lp(-0.4, "YES"), 11: lp(-1.6, "NO"), 12: lp(-2.0, "Y")}, {20: lp(0.0, '"}')}]
    assert p_yes(from_vllm(ids, maps, top=3))[0] is None
    maps[3][13] = lp(-math.inf, "{")
    assert p_yes(from_vllm(ids, maps, top=4))[0] == pytest.approx(yes / (yes + math.exp(-1.6)))
    # A split quote's step counts too: its top k must be whole.
    quote = Step('"', (('"', -0.7), ('"Y', -1.0), ('"N', -1.2)), -0.7, top=3)
    letter = Step("Y", (("Y", -0.1), ("N", -2.0), ("x", -math.inf)), -0.1)
    value, why = p_yes([*plain('{"label":'), quote, letter, *plain('ES"}')])
    assert value is None and "masked" in why
    # So at any step inside the key: a cut top k there may hide a token that crosses the letter.
    key = Step('":"', (('":"', -0.1), ('"', -2.3)), -0.1, top=2)
    value, why = p_yes([*plain('{"label'), key, letter, *plain('ES"}')])
    assert value is None and "key" in why


def test_the_legal_tokens_are_counted_from_the_grammar():
    """A toy vocabulary under YesNo's grammar: after `{"label":"` every token that starts YES
    or NO (and the whole value with what follows it) is legal, nothing else; inside the key,
    the prefixes of what remains of it."""
    vocabulary = ["Y", "YE", "YES", 'YES"}', "N", "NO", "NOT", "Yes", '"', '":"', '":', "l", "x"]
    regex = YesNo.regex()
    assert legal_after(vocabulary, regex, '{"label":"') == 6  # Y YE YES YES"} N NO
    assert legal_after(vocabulary, regex, '{"label') == 3  # " ": ":"
    assert legal_after(vocabulary, regex, '{"label":') == 1  # "
    assert legal_where_decided(vocabulary, regex) == 6
    # A reason before the label: the same count where the label is decided.
    assert legal_where_decided(vocabulary, ReasonedYesNo.regex()) == 6


@pytest.mark.parametrize("model", ["smollm2-135m-instruct", "gemma3-270m"])
def test_the_count_is_what_outlines_core_allows_on_the_real_tokenizers(model):
    """The count of legal tokens, at each position the verdict's own tokenization passes inside
    the label's key and where the label is decided, equals the tokens outlines-core's index of
    the same grammar allows there (an independent compiler: the transformers engine's). The
    alternatives a route asks for hold them all, with one to spare (a masked one shows the list
    is whole): Gemma's 7 legal first tokens do not fit in the 5 asked before."""
    from outlines.backends.outlines_core import OutlinesCoreBackend
    from outlines.models.transformers import TransformerTokenizer
    from outlines_core import Index
    from transformers import AutoTokenizer

    path = require_model(model)
    hf = AutoTokenizer.from_pretrained(path)
    labels = LabelTokens(hf)
    tok = TransformerTokenizer(hf)
    vocabulary = OutlinesCoreBackend.create_outlines_core_vocabulary(
        tok.get_vocab(), tok.eos_token_id, tok.eos_token, tok.convert_token_to_string
    )
    regex = YesNo.regex()
    index = Index(regex, vocabulary)
    state, text, most = index.get_initial_state(), "", 0
    for t in hf.encode('{"label":"YES"}', add_special_tokens=False):
        allowed = [a for a in index.get_allowed_tokens(state) if a != hf.eos_token_id]
        if text and LABEL_KEY.startswith(text[1:]):  # inside the key, or just before it
            assert legal_after(labels.texts, regex, text) == len(allowed), text
            most = max(most, len(allowed))
        if text.endswith(LABEL_KEY):
            break
        text += hf.decode([t])
        state = index.get_next_state(state, t)
    assert text.endswith(LABEL_KEY)
    counted = legal_where_decided(labels.texts, regex)
    assert counted is not None and counted >= most
    asked = labels.top_logprobs(regex)
    assert asked == min(counted + 1, MAX_TOP_LOGPROBS)
    if model == "gemma3-270m":
        assert legal_after(labels.texts, regex, '{"label":"') == 7 and asked > 5


def test_an_engine_without_the_vocabulary_asks_the_most_a_server_returns():
    """Where the grammar's legal tokens cannot be counted (no tokenizer), a route asks the most
    vLLM's server returns by default (its max_logprobs), and the completeness check decides."""
    from murgat_local.engines.logprobs import top_logprobs_for

    assert top_logprobs_for(None, YesNo.regex()) == MAX_TOP_LOGPROBS
    assert top_logprobs_for(LabelTokens(None, texts=["Y", "N"]), YesNo.regex()) == 3


def test_every_route_asks_the_counted_number_of_alternatives():
    """The external server's body, Ray's sampling and the in-process fallback all ask the
    count from the grammar (SmolLM2: its legal tokens plus one), never a constant."""
    from types import SimpleNamespace

    from transformers import AutoTokenizer

    from murgat_local.engines.ray import _sampling as ray_sampling
    from murgat_local.engines.vllm import VLLMEngine
    from murgat_local.engines.wire import body

    preset = load_preset("smollm2-135m-instruct")
    labels = LabelTokens(AutoTokenizer.from_pretrained(require_model(preset.name)))
    request = Request("Is the sky blue?", YesNo)
    k = labels.top_logprobs(request.constraint())
    assert 4 <= k <= MAX_TOP_LOGPROBS  # Y, N and NO after the key, more inside it
    wire = body(request, preset.quirks, "m", 0.0, top_logprobs=k)
    assert (wire["logprobs"], wire["top_logprobs"]) == (True, k)
    assert ray_sampling(request, 0.0, 0, preset.quirks, top_logprobs=k)["logprobs"] == k
    engine = SimpleNamespace(
        preset=preset, temperature=0.0, label_ids=None, top_logprobs=lambda r: k
    )
    assert VLLMEngine._sampling(engine, request).logprobs == k
