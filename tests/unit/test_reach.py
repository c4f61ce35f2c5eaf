"""Tokens received per modality (issue 29): which prompt tokens are a model's media placeholders,
what each call's record says reached the model, and a cited modality that did not arrive as that
call's error, never a verdict."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest
from support.fakes import OracleEngine
from support.paths import require_model

from murgat_local.engines import AudioPart, ImagePart, Request, VideoPart, load_preset
from murgat_local.engines.reach import count, placeholder_tokens, unreached
from murgat_local.judges import YesNo, load_prompt
from murgat_local.judges.calls import Call
from murgat_local.pipeline.cache import VerdictCache
from murgat_local.pipeline.judging import StageJudge
from murgat_local.pipeline.records import _verdict

NONE = {"image": 0, "video": 0, "audio": 0}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("tiny-qwen3-omni", {3012: "image", 3013: "video", 3032: "audio"}),
        (
            "tiny-qwen2.5-omni",
            {3012: "image", 3013: "video", 3003: "audio"},
        ),  # the thinker's, not the talker's
        ("tiny-gemma3", {10: "image"}),
        ("tiny-gemma4", {12: "image", 16: "video", 15: "audio"}),
        ("tiny-qwen2-audio", {3003: "audio"}),
        ("smollm2-135m-instruct", {}),
    ],
)
def test_placeholders_come_from_the_model_config(name, expected):
    require_model(name)
    assert placeholder_tokens(load_preset(name).path) == expected


def test_placeholders_from_the_tokenizer_when_the_config_names_none(tmp_path):
    require_model("tiny-qwen2.5-omni")
    src = load_preset("tiny-qwen2.5-omni").path
    folder = tmp_path / "m"
    shutil.copytree(src, folder)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    found = placeholder_tokens(folder, tok)
    assert found == {
        tok.convert_tokens_to_ids("<|AUDIO|>"): "audio",
        tok.convert_tokens_to_ids("<|IMAGE|>"): "image",
        tok.convert_tokens_to_ids("<|VIDEO|>"): "video",
    }


def test_counts_and_the_unreached_rule():
    marks = {7: "image", 8: "video", 9: "audio"}
    assert count([1, 7, 7, 2, 9, 9, 9], marks) == {"image": 2, "video": 0, "audio": 3}
    audio = Request("x", YesNo, media=(AudioPart(np.zeros(1600, np.float32)),))
    video = Request("x", YesNo, media=(VideoPart(np.zeros((2, 8, 8, 3), np.uint8), 2.0),))
    assert unreached(audio, {"image": 0, "video": 0, "audio": 5}, "m", "vllm") is None
    assert (
        unreached(audio, NONE, "tiny-qwen2.5-omni", "openai")
        == "audio cited, 0 audio tokens reached tiny-qwen2.5-omni on the server engine"
    )
    assert unreached(audio, None, "m", "openai") is None  # unknown is not zero
    assert unreached(Request("x", YesNo), NONE, "m", "vllm") is None
    # A clip sent as separate frames arrives as image tokens.
    assert (
        unreached(
            video,
            {"image": 40, "video": 0, "audio": 0},
            "tiny-gemma3",
            "vllm",
            video_as_images=True,
        )
        is None
    )
    assert "video cited, 0 video tokens" in unreached(
        video, {"image": 40, "video": 0, "audio": 0}, "m", "vllm"
    )


class CountingEngine(OracleEngine):
    """The oracle, reporting what reached the model: `drop` modalities arrive as zero tokens."""

    def __init__(self, drop=(), **kw):
        super().__init__(**kw)
        self.drop = set(drop)

    def judge(self, requests):
        results = super().judge(requests)
        out = []
        for req, res in zip(requests, results):
            reached = dict(NONE)
            for m in req.media:
                reached[m.modality] += 0 if m.modality in self.drop else 10
            out.append(dataclasses.replace(res, reached=reached))
        return out


def _calls():
    tpl = load_prompt("entail")
    tone = AudioPart((0.3 * np.sin(np.arange(16000) / 5)).astype(np.float32))
    red = ImagePart(np.full((32, 32, 3), (200, 30, 30), np.uint8))
    audio = Call(
        tpl,
        tpl.render(fact="A tone plays.", evidence="audio"),
        (("a.wav", "d1", "audio", 0, 1),),
        media=lambda: (tone,),
    )
    image = Call(
        tpl,
        tpl.render(fact="The screen is red.", evidence="image"),
        (("a.mp4", "d2", "image", 0, 0),),
        media=lambda: (red,),
    )
    return [audio, image]


def test_a_cited_modality_that_did_not_arrive_is_an_error_and_the_run_goes_on(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    judge = StageJudge("entail", CountingEngine(drop={"audio"}), cache)
    audio, image = judge.run(_calls())
    assert (
        audio.verdict is None
        and audio.error == "audio cited, 0 audio tokens reached oracle on the oracle engine"
    )
    assert audio.reached == {"image": 0, "video": 0, "audio": 0}
    assert image.ok and image.reached == {"image": 10, "video": 0, "audio": 0}
    assert judge.counters.unreached == 1 and judge.counters.errors == 1
    summary = judge.counters.as_dict()
    assert summary["reached"] == {"image": 10, "video": 0, "audio": 0} and summary["unreached"] == 1
    # The error is never cached: a later run asks again.
    assert cache.count() == 1
    rec = _verdict(audio)
    assert (
        rec["value"] is None
        and rec["error"].startswith("audio cited")
        and rec["reached"]["audio"] == 0
    )


def test_reached_survives_the_cache_and_is_summed_per_stage(tmp_path):
    calls = _calls()
    fresh_judge = StageJudge("entail", CountingEngine(), VerdictCache(tmp_path / "c.sqlite"))
    fresh = fresh_judge.run(calls)
    assert [o.reached for o in fresh] == [
        {"image": 0, "video": 0, "audio": 10},
        {"image": 10, "video": 0, "audio": 0},
    ]
    again = StageJudge("entail", CountingEngine(), VerdictCache(tmp_path / "c.sqlite"))
    resumed = again.run(calls)
    assert again.counters.cache_hits == 2 and again.counters.model_calls == 0
    assert [(o.cached, o.reached, o.verdict) for o in resumed] == [
        (True, a.reached, a.verdict) for a in fresh
    ]
    assert again.counters.as_dict()["reached"] == {"image": 10, "video": 0, "audio": 10}
    assert json.loads(json.dumps(_verdict(resumed[0])))["reached"] == {
        "image": 0,
        "video": 0,
        "audio": 10,
    }


def test_an_engine_that_cannot_count_says_so_rather_than_inventing_zeros(tmp_path):
    judge = StageJudge("entail", OracleEngine(), VerdictCache(tmp_path / "c.sqlite"))
    audio, image = judge.run(_calls())
    assert audio.ok and audio.reached is None and audio.reached_unknown
    assert (
        _verdict(audio)["reached"] is None
        and _verdict(audio)["reached_unknown"] == audio.reached_unknown
    )
    assert judge.counters.unreached == 0 and judge.counters.reached_unknown == 2


# ---------------------------------------------------------------- broken paths, on a real model


def test_the_report_drilldown_shows_what_reached_each_judge():
    from murgat_local.reports.drilldown import _sentence
    from murgat_local.results.records import SentenceRecord

    fact = {
        "text": "A tone plays.",
        "precision": 1.0,
        "recall": 1.0,
        "precise": [True],
        "joint": {
            "value": True,
            "raw": '{"label":"YES"}',
            "reached": {"image": 0, "video": 48, "audio": 50},
        },
        "alone": {
            "1": {
                "value": None,
                "raw": "",
                "reached": {"image": 0, "video": 0, "audio": 0},
                "error": "audio cited, 0 audio tokens reached m on the server engine",
            }
        },
        "without": {
            "1": {
                "value": False,
                "raw": '{"label":"NO"}',
                "reached": None,
                "reached_unknown": "the server returned no prompt token ids",
            }
        },
    }
    sentence = {
        "text": "A tone plays [1].",
        "citations": [{"modality": "audio", "start": 0, "end": 2}],
        "verifiable": {"value": True, "raw": '{"label":"YES"}'},
        "facts": [fact],
    }
    notes: list[str] = []
    html = _sentence(SentenceRecord.model_validate(sentence), 1, notes)
    assert "tokens reached: image 0 · video 48 · audio 50" in html
    assert "audio cited, 0 audio tokens reached m on the server engine" in html
    assert "tokens reached: not counted (the server returned no prompt token ids)" in html
