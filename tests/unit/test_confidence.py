"""A yes/no verdict's confidence, `p_yes`: the renormalisation, the deciding-token search, the
cache round trip and a panel's vote share and mean (pure; the engines' p_yes is checked on real
engines in test_engine_contract.py)."""

from __future__ import annotations

import math

import pytest

from murgat_local.engines.confidence import (
    Step,
    deciding_token,
    label_token_ids,
    p_yes,
    renormalise,
)
from murgat_local.judges.panel import Rule, mean_p_yes, vote, vote_share
from murgat_local.pipeline.cache import CachedVerdict, VerdictCache


def steps(*tokens: str, at: int | None = None, alternatives=()) -> list[Step]:
    """The chosen tokens, each its own only alternative, except `alternatives` at `at`."""
    out = [Step(t, ((t, 0.0),)) for t in tokens]
    if at is not None:
        out[at] = Step(tokens[at], tuple(alternatives))
    return out


def test_renormalise_over_yes_and_no():
    assert renormalise(math.log(0.3), math.log(0.1)) == pytest.approx(0.75)
    assert renormalise(-1000.0, -1000.0) == pytest.approx(0.5)  # no underflow
    assert renormalise(0.0, -math.inf) == 1.0 and renormalise(-math.inf, -2.0) == 0.0
    with pytest.raises(ValueError):
        renormalise(-math.inf, -math.inf)


def test_the_deciding_token_is_where_the_labels_value_starts():
    # {"label":"YES"} as a tokenizer might split it: the value starts token 3's text.
    toks = ('{"', "label", '":"', "YES", '"}')
    assert deciding_token(steps(*toks)) == (3, 0)
    # A token that carries the quote and the first letter: the value starts inside it.
    assert deciding_token(steps('{"', "label", '":', '"Y', 'ES"}')) == (3, 1)
    # A thinking judge's reasoning may mention a label: the verdict's is the last one.
    thought = ("<think>", 'say "label":"NO"?', "</think>")
    assert deciding_token(steps(*thought, *toks)) == (6, 0)
    # A reasoned verdict: the reason comes first.
    assert deciding_token(steps('{"reason":"red","', 'label":"', "NO", '"}')) == (2, 0)
    # A generation cut before the value has no deciding token.
    assert deciding_token(steps('{"', "label", '":"')) is None
    assert deciding_token(steps("   ")) is None


def test_p_yes_sums_each_answers_alternatives_and_leaves_the_rest_out():
    toks = ('{"', "label", '":"', "NO", '"}')
    alternatives = [
        ("NO", math.log(0.4)),
        ("N", math.log(0.1)),  # a NO spelled in more tokens
        ("YES", math.log(0.2)),
        ("Y", math.log(0.05)),
        ("maybe", math.log(0.25)),  # neither: decides nothing
        ("Z", -math.inf),  # masked by the grammar
    ]
    value, why = p_yes(steps(*toks, at=3, alternatives=alternatives))
    assert why is None and value == pytest.approx(0.25 / 0.75)
    # The value starting inside a token: alternatives must share the token's head.
    split = steps(
        '{"label":', '"N', 'O"}', at=1, alternatives=[('"N', -1.0), ('"Y', -1.0), ("Y", 0.0)]
    )
    assert p_yes(split) == (pytest.approx(0.5), None)


def test_p_yes_without_log_probabilities_says_why():
    assert p_yes([]) == (None, "the engine returned no log-probabilities")
    assert p_yes(steps("hello"))[0] is None
    none_decide = steps('{"label":"', "YES", at=1, alternatives=[("?", 0.0)])
    value, why = p_yes(none_decide)
    assert value is None and "YES or NO" in why


def test_a_cached_verdict_comes_back_with_its_p_yes(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    rows = [
        (
            "k1",
            "verifiable",
            "j",
            CachedVerdict("ok", '{"label":"YES"}', "r", None, 3, 4, p_yes=0.8125),
        ),
        (
            "k2",
            "verifiable",
            "j",
            CachedVerdict("ok", '{"label":"NO"}', "r", None, 3, 4, p_yes_unknown="none"),
        ),
        (
            "k3",
            "verifiable",
            "j",
            CachedVerdict("unparsed", None, "r", "cut", 3, 4, thought_cut=True),
        ),
    ]
    cache.put_many(rows)
    cache.close()
    got = VerdictCache(tmp_path / "c.sqlite").get_many(["k1", "k2", "k3"])
    assert got["k1"].p_yes == 0.8125 and got["k1"].p_yes_unknown is None
    assert got["k2"].p_yes is None and got["k2"].p_yes_unknown == "none"
    assert got["k3"].thought_cut is True and got["k1"].thought_cut is False


def test_a_cache_written_before_p_yes_opens_and_reads_none(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the columns a cache had before p_yes
        conn.execute(
            "CREATE TABLE verdicts (key TEXT PRIMARY KEY, stage TEXT NOT NULL, judge TEXT NOT NULL, "
            "status TEXT NOT NULL, verdict TEXT, raw TEXT NOT NULL, reason TEXT, prompt_tokens "
            "INTEGER, output_tokens INTEGER, created REAL NOT NULL, note TEXT, reached TEXT, "
            "reached_unknown TEXT)"
        )
        conn.execute(
            "INSERT INTO verdicts VALUES ('k','s','j','ok','{}','r',NULL,1,1,0,NULL,NULL,NULL)"
        )
    got = VerdictCache(path).get_many(["k"])["k"]
    assert got.p_yes is None and got.thought_cut is False


def test_a_panels_confidence_is_its_vote_share_and_its_members_mean():
    tally = vote(Rule("majority"), {"a": True, "b": True, "c": False, "d": None})
    assert vote_share(tally) == pytest.approx(2 / 3)
    weighted = vote(Rule("weighted", (("a", 3.0), ("b", 1.0))), {"a": True, "b": False})
    assert vote_share(weighted) == pytest.approx(0.75)
    assert vote_share(vote(Rule(), {"a": None, "b": None})) is None
    assert mean_p_yes([0.9, None, 0.3]) == pytest.approx(0.6)
    assert mean_p_yes([None, None]) is None


def test_the_servers_chosen_token_is_counted_once():
    """`vllm serve` lists the chosen token among `top_logprobs` too: counted once, it gives the
    in-process engine's p_yes (0.276 here; counted twice it gave 0.166, measured on SmolLM2)."""
    import math as m

    from murgat_local.engines.logprobs import from_openai

    tops = [("NO", -0.412), ("Y", -1.287), ("N", -2.787), ('"', -9999.0)]
    entry = {
        "token": "NO",
        "logprob": -0.412,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops],
    }
    plain = {"token": '"}', "logprob": 0.0, "top_logprobs": [{"token": '"}', "logprob": 0.0}]}
    head = [{"token": t, "logprob": 0.0, "top_logprobs": []} for t in ('{"', "label", '":"')]
    choice = {"logprobs": {"content": [*head, entry, plain]}}
    yes, no = m.exp(-1.287), m.exp(-0.412) + m.exp(-2.787)
    assert p_yes(from_openai(choice)) == (pytest.approx(yes / (yes + no)), None)
    # A chosen token outside the top alternatives is still one of them.
    entry["top_logprobs"] = [{"token": "Y", "logprob": -1.287}]
    yes, no = m.exp(-1.287), m.exp(-0.412)
    assert p_yes(from_openai(choice)) == (pytest.approx(yes / (yes + no)), None)


def test_the_label_tokens_are_every_token_that_can_start_yes_or_no():
    """The ids asked for at every generated token (vLLM's `logprob_token_ids`): each text that
    can be the deciding token under the grammar (the end of the label's key, then the start of
    YES" or NO"), and nothing that cannot."""
    vocabulary = [
        "Y", "YES", "YE", 'YES"', 'YES"}', "N", "NO", 'NO"}', '"Y', ':"N', '"label":"NO',
        ',"label":"YES',  # a longer head that ends with the key
        "Yes", "NEW", "No", " YES", "NONE", "YESS", 'x"Y', "label", '":"', "", "A",
    ]  # fmt: skip
    ids = label_token_ids(enumerate(vocabulary))
    assert [vocabulary[i] for i in ids] == vocabulary[:12]
    assert label_token_ids([(7, "YES"), (9, "NO")]) == (7, 9)


def test_p_yes_from_the_label_tokens_is_p_yes_from_the_top_alternatives():
    """The alternatives vLLM returns for `logprob_token_ids` (the chosen token, then each label
    token, -inf where the grammar masks it) give the p_yes the top alternatives give."""
    toks = ('{"', "label", '":"', "YES", '"}')
    top = [("YES", -0.3), ("N", -1.9), ("Y", -2.2), ("NO", -3.0), ("{", -math.inf)]
    labels = [("YES", -0.3), ("Y", -2.2), ("YE", -math.inf), ("N", -1.9), ("NO", -3.0)]
    by_top = p_yes(steps(*toks, at=3, alternatives=top))
    by_labels = p_yes(steps(*toks, at=3, alternatives=labels))
    assert by_top[1] is None and by_labels == (pytest.approx(by_top[0], abs=1e-15), None)


def test_transformers_scores_keep_every_legal_label_token_past_the_top_five():
    """Seven legal tokens at the deciding step (Gemma's Y, YES, N, NO and the byte tokens of Y
    and N, plus one more): the top 5 alone would miss a label token; with the label ids every
    one counts, and p_yes is the exact renormalisation over the legal distribution."""
    import torch

    from murgat_local.engines.logprobs import from_scores

    vocab = ['{"', "label", '":"', "YES", "Y", "NO", "N", "<0x59>", "<0x4E>", "x", '"}']
    byte_text = {7: "Y", 8: "N"}  # a byte token decodes to its letter
    decode = lambda t: byte_text.get(t, vocab[t])  # noqa: E731
    probs = {3: 0.30, 5: 0.25, 4: 0.15, 6: 0.12, 9: 0.08, 7: 0.06, 8: 0.04}  # 7 legal
    row = torch.full((1, len(vocab)), -math.inf)
    for t, p in probs.items():
        row[0, t] = math.log(p)
    chosen = [0, 1, 2, 3, 10]
    rows = [torch.zeros((1, len(vocab))) for _ in chosen]
    rows[3] = row
    labels = [3, 4, 5, 6, 7, 8]
    yes = probs[3] + probs[4] + probs[7]
    exact = yes / (yes + probs[5] + probs[6] + probs[8])
    with_labels, _ = p_yes(from_scores(chosen, rows, decode, labels))
    top_five, _ = p_yes(from_scores(chosen, rows, decode))
    assert with_labels == pytest.approx(exact)
    assert top_five != pytest.approx(exact)  # the top 5 miss both byte tokens


def test_p_yes_is_the_same_read_from_logits_or_their_log_softmax():
    """The engines this run starts return masked logits (`LOGPROBS_MODE`), other servers
    their log-softmax: one constant apart per position, and p_yes does not see it."""
    logits = [("YES", 2.5), ("Y", 0.25), ("NO", 1.0), ("N", -3.0), ('"', -math.inf)]
    finite = [v for _, v in logits if v != -math.inf]
    log_total = max(finite) + math.log(sum(math.exp(v - max(finite)) for v in finite))
    logprobs = [(t, v - log_total) for t, v in logits]
    toks = ('{"', "label", '":"', "YES", '"}')
    from_logits, why = p_yes(steps(*toks, at=3, alternatives=logits))
    from_logprobs, _ = p_yes(steps(*toks, at=3, alternatives=logprobs))
    assert why is None and from_logits == pytest.approx(from_logprobs, abs=1e-12)
    yes = math.exp(2.5) + math.exp(0.25)
    assert from_logits == pytest.approx(yes / (yes + math.exp(1.0) + math.exp(-3.0)))
