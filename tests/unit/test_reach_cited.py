"""Reach per citation (issue 44, deliverable 6): each cited part's expected placeholder tokens
against the tokens that arrived for it in the engine's prompt ids. A part that arrived short or
not at all is the call's error, naming the citation; the three broken paths of the issue (two
audio citations with one dropped, a clip dropped beside an image, one placeholder left
unexpanded) on deterministic fakes of prompt ids, and a correct request that passes."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from support.fakes import OracleEngine

from murgat_local.engines import AudioPart, ImagePart, Request, VideoPart
from murgat_local.engines.reach import (
    CitedTokens,
    arrivals,
    cited_fields,
    count,
    part_label,
    runs,
    short,
    unreached,
)
from murgat_local.judges import YesNo, load_prompt
from murgat_local.judges.calls import Call
from murgat_local.pipeline.cache import CachedVerdict, VerdictCache
from murgat_local.pipeline.judging import StageJudge

MARKS = {7: "image", 8: "video", 9: "audio"}
IMAGES_ONLY = {7: "image"}  # a model that takes a clip as its frames (Gemma 3): no video token
OPEN, CLOSE, TEXT = 100, 101, 5  # a part's boundary tokens, and a prompt's text


def audio(start: float, seconds: float) -> AudioPart:
    n = int(seconds * 16000)
    return AudioPart((0.3 * np.sin(np.arange(n) / 5)).astype(np.float32), start=start)


def image(t: float) -> ImagePart:
    return ImagePart(np.full((32, 32, 3), (200, 30, 30), np.uint8), t=t)


def clip(start: float, frames: int = 4) -> VideoPart:
    times = tuple(start + k / 2 for k in range(frames))
    return VideoPart(np.zeros((frames, 16, 16, 3), np.uint8), 2.0, start=start, times=times)


def fake_expected(part, as_images: bool = False) -> tuple[str, int]:
    """A deterministic stand-in for a processor: 25 audio tokens a second, 4 per image, 3 per
    frame of a clip (4 per frame sent as an image)."""
    if isinstance(part, AudioPart):
        return "audio", len(part.waveform) * 25 // part.sample_rate
    if isinstance(part, ImagePart):
        return "image", 4
    return ("image", 4 * len(part.frames)) if as_images else ("video", 3 * len(part.frames))


def prompt_ids(parts, *, drop=(), unexpanded=(), as_images=False) -> list[int]:
    """Prompt ids as a runtime would expand them: text, then each part's tokens between its
    boundary tokens (a clip's frames each in a stretch of their own, as Qwen3-VL and a clip sent
    as images have them). `drop`: parts whose tokens never arrive; `unexpanded`: parts left as
    one placeholder."""
    ids = [TEXT, TEXT]
    token = {m: t for t, m in MARKS.items()}
    for i, p in enumerate(parts):
        modality, n = fake_expected(p, as_images)
        if i in drop:
            continue
        ids.append(OPEN)
        if i in unexpanded:
            ids.append(token[modality])
        elif isinstance(p, VideoPart):
            for _ in range(len(p.frames)):
                ids += [TEXT, *[token[modality]] * (n // len(p.frames))]
        else:
            ids += [token[modality]] * n
        ids.append(CLOSE)
    return ids + [TEXT]


def check(parts, **broken) -> str | None:
    req = Request("x", YesNo, media=tuple(parts))
    ids = prompt_ids(parts, **broken)
    fields = cited_fields(req, [fake_expected(p) for p in parts], ids, MARKS)
    return unreached(req, count(ids, MARKS), "m", "vllm", cited=fields["cited"])


# ---------------------------------------------------------------- the matching, on fake ids


def test_runs_split_the_ids_into_stretches_of_one_modality():
    assert runs([5, 9, 9, 100, 9, 7, 7, 8, 5, 8], MARKS) == [
        ("audio", 2),
        ("audio", 1),
        ("image", 2),
        ("video", 1),
        ("video", 1),
    ]


def test_a_correct_request_passes_and_every_part_arrived_whole():
    parts = [image(1.0), clip(2.0), audio(0.0, 2.0), audio(2.0, 1.0)]
    req = Request("x", YesNo, media=tuple(parts))
    ids = prompt_ids(parts)
    fields = cited_fields(req, [fake_expected(p) for p in parts], ids, MARKS)
    assert [(c.citation, c.modality, c.expected, c.arrived) for c in fields["cited"]] == [
        ("visual 0:01", "image", 4, 4),
        ("visual 0:02-0:03.5", "video", 12, 12),
        ("audio 0:00-0:02", "audio", 50, 50),
        ("audio 0:02-0:03", "audio", 25, 25),
    ]
    assert unreached(req, count(ids, MARKS), "m", "vllm", cited=fields["cited"]) is None


def test_two_audio_citations_with_one_dropped_name_the_dropped_one():
    parts = [audio(0.0, 2.0), audio(2.0, 1.0)]
    assert check(parts, drop={1}) == (
        "audio 0:02-0:03: expected 25 audio tokens, 0 arrived (m, in-process vLLM engine)"
    )
    assert check(parts, drop={0}) == (
        "audio 0:00-0:02: expected 50 audio tokens, 0 arrived (m, in-process vLLM engine)"
    )


def test_two_audio_citations_of_one_length_with_one_dropped_say_the_ids_fit_either():
    why = check([audio(0.0, 2.0), audio(4.0, 2.0)], drop={0})
    assert why == (
        "audio 0:04-0:06: expected 50 audio tokens, 0 arrived (or audio 0:00-0:02 instead: "
        "the prompt ids cannot tell which) (m, in-process vLLM engine)"
    )


def test_a_clip_dropped_beside_an_image_names_the_clip():
    assert check([image(1.0), clip(2.0)], drop={1}) == (
        "visual 0:02-0:03.5: expected 12 video tokens, 0 arrived (m, in-process vLLM engine)"
    )


def test_a_clip_sent_as_frames_dropped_beside_an_image_names_the_clip():
    # A model that takes video as frames: the clip's frames arrive as image tokens, beside the
    # image's, so the modality is not at zero.
    parts = [image(1.0), clip(2.0)]
    req = Request("x", YesNo, media=tuple(parts))
    ids = prompt_ids(parts, drop={1}, as_images=True)
    expected = [fake_expected(p, as_images=True) for p in parts]
    fields = cited_fields(req, expected, ids, IMAGES_ONLY)
    assert unreached(req, count(ids, IMAGES_ONLY), "m", "vllm", cited=fields["cited"]) == (
        "visual 0:02-0:03.5: expected 16 image tokens, 0 arrived (m, in-process vLLM engine)"
    )
    assert unreached(req, count(ids, IMAGES_ONLY), "m", "vllm", video_as_images=True) is None


def test_one_placeholder_left_unexpanded_names_the_part():
    assert check([audio(0.0, 2.0)], unexpanded={0}) == (
        "audio 0:00-0:02: expected 50 audio tokens, 1 arrived (m, in-process vLLM engine)"
    )
    # Beside a part that did arrive: the short one is named, the whole one is not.
    assert check([image(3.0), audio(0.0, 2.0), audio(2.0, 2.0)], unexpanded={2}) == (
        "audio 0:02-0:04: expected 50 audio tokens, 1 arrived (m, in-process vLLM engine)"
    )


def test_parts_whose_tokens_abut_pass_when_their_modality_arrived_whole():
    # No boundary between two parts of one modality: one stretch of ids, nothing missing.
    parts = [audio(0.0, 1.0), audio(1.0, 1.0)]
    req = Request("x", YesNo, media=tuple(parts))
    ids = [TEXT] + [9] * 50 + [TEXT]
    fields = cited_fields(req, [("audio", 25), ("audio", 25)], ids, MARKS)
    assert unreached(req, count(ids, MARKS), "m", "vllm", cited=fields["cited"]) is None


def test_arrivals_keep_prompt_order_across_modalities():
    # audio, image, audio with the last audio lost: the image between them tells which.
    expected = [("audio", 50), ("image", 4), ("audio", 50)]
    ids = [9] * 50 + [OPEN] + [7] * 4
    assert arrivals(expected, ids, MARKS) == [(50, 50), (4, 4), (0, 0)]


def test_a_part_whose_expectation_is_unknown_leaves_the_zero_check():
    parts = (audio(0.0, 2.0), audio(2.0, 1.0))
    req = Request("x", YesNo, media=parts)
    ids = prompt_ids(list(parts), drop={1})
    why = "the model's processor is not readable here"
    fields = cited_fields(req, why, ids, MARKS)
    assert fields == {"cited_unknown": why}
    assert unreached(req, count(ids, MARKS), "m", "vllm") is None  # >0 arrived: passes as today


def test_labels_name_each_part_as_its_citation_reads():
    assert part_label(image(12.0), 0) == "visual 0:12"
    assert part_label(clip(4.0, 11), 0) == "visual 0:04-0:09"
    assert part_label(audio(2.0, 2.0), 0) == "audio 0:02-0:04"
    assert part_label(AudioPart(np.zeros(16000, np.float32)), 2) == "audio part 3"
    assert part_label(ImagePart(np.zeros((4, 4, 3), np.uint8)), 0) == "image part 1"


def test_short_reads_the_stored_parts_alone():
    stored = [CitedTokens("audio 0:00-0:02", "audio", 50, 0)]
    assert short(stored, {"audio": 0}) == "audio 0:00-0:02: expected 50 audio tokens, 0 arrived"
    assert CitedTokens.from_list(stored[0].as_list()) == stored[0]
    assert short([CitedTokens("audio 0:00-0:02", "audio", 50, 50)], {"audio": 50}) is None


# ---------------------------------------------------------------- through the stage judge


class IdsEngine(OracleEngine):
    """The oracle, reporting the prompt ids a runtime would have built for each request (fake
    expansion, `prompt_ids`), with a broken path: parts dropped or left unexpanded by index."""

    def __init__(self, drop=(), unexpanded=(), as_images=False, per_citation=True, **kw):
        super().__init__(**kw)
        self.broken = {"drop": set(drop), "unexpanded": set(unexpanded), "as_images": as_images}
        self.marks = IMAGES_ONLY if as_images else MARKS
        self.per_citation = per_citation

    def judge(self, requests):
        out = []
        for req, res in zip(requests, super().judge(requests)):
            ids = prompt_ids(list(req.media), **self.broken)
            expected = [fake_expected(p, self.broken["as_images"]) for p in req.media]
            fields = cited_fields(req, expected, ids, self.marks) if self.per_citation else {}
            out.append(dataclasses.replace(res, reached=count(ids, self.marks), **fields))
        return out


def _call(parts, fact="The screen is red.") -> Call:
    tpl = load_prompt("entail")
    return Call(
        tpl,
        tpl.render(fact=fact, evidence="attached"),
        tuple(("v.mp4", "d", p.modality, i, i + 1) for i, p in enumerate(parts)),
        media=lambda: tuple(parts),
    )


CASES = [
    (
        "two audio citations, one dropped",
        [audio(0.0, 2.0), audio(2.0, 1.0)],
        {"drop": {1}},
        "audio 0:02-0:03: expected 25 audio tokens, 0 arrived",
    ),
    (
        "a clip dropped beside an image",  # the clip sent as frames: its tokens are images too
        [image(1.0), clip(2.0)],
        {"drop": {1}, "as_images": True},
        "visual 0:02-0:03.5: expected 16 image tokens, 0 arrived",
    ),
    (
        "one placeholder left unexpanded",
        [audio(0.0, 2.0)],
        {"unexpanded": {0}},
        "audio 0:00-0:02: expected 50 audio tokens, 1 arrived",
    ),
]


@pytest.mark.parametrize("name, parts, broken, error", CASES, ids=[c[0] for c in CASES])
def test_each_broken_path_is_the_calls_error_naming_the_citation(
    name, parts, broken, error, tmp_path
):
    cache = VerdictCache(tmp_path / "c.sqlite")
    judge = StageJudge("entail", IdsEngine(**broken), cache)
    (out,) = judge.run([_call(parts)])
    assert out.verdict is None and out.error == f"{error} (oracle, oracle engine)", out
    assert judge.counters.unreached == 1 and judge.counters.model_calls == 0
    assert cache.count() == 0  # an error is never cached: a later run asks again
    # Today's check, modality totals above zero, lets each of them through as reached.
    blind = StageJudge("entail", IdsEngine(per_citation=False, **broken), cache)
    (passed,) = blind.run([_call(parts)])
    assert passed.ok and blind.counters.unreached == 0


def test_a_correct_request_is_judged_and_its_per_citation_count_cached(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    parts = [image(1.0), clip(2.0), audio(0.0, 2.0), audio(2.0, 1.0)]
    judge = StageJudge("entail", IdsEngine(), cache)
    (out,) = judge.run([_call(parts)])
    assert out.ok and out.error is None and judge.counters.unreached == 0
    assert judge.counters.cited_unknown == 0
    ((key, row),) = cache.get_many(judge.keys([_call(parts)])).items()
    assert [CitedTokens.from_list(c) for c in json.loads(row.cited)["parts"]] == [
        CitedTokens("visual 0:01", "image", 4, 4),
        CitedTokens("visual 0:02-0:03.5", "video", 12, 12),
        CitedTokens("audio 0:00-0:02", "audio", 50, 50),
        CitedTokens("audio 0:02-0:03", "audio", 25, 25),
    ]
    again = StageJudge("entail", IdsEngine(), cache)
    (cached,) = again.run([_call(parts)])
    assert cached.cached and cached.ok and again.counters.cache_hits == 1


def test_an_engine_without_per_citation_counts_keeps_the_zero_check_and_says_so(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    judge = StageJudge("entail", IdsEngine(per_citation=False), cache)
    (out,) = judge.run([_call([audio(0.0, 2.0)])])
    assert out.ok and judge.counters.cited_unknown == 1
    ((_, row),) = cache.get_many(judge.keys([_call([audio(0.0, 2.0)])])).items()
    assert json.loads(row.cited) == {"unknown": "the engine does not count tokens per citation"}
    # Cached with its reason: served from the cache, not judged again.
    again = StageJudge("entail", IdsEngine(per_citation=False), cache)
    again.run([_call([audio(0.0, 2.0)])])
    assert again.counters.cache_hits == 1 and again.counters.model_calls == 0


def test_a_verdict_cached_before_per_citation_counting_is_judged_again(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    parts = [audio(0.0, 2.0), audio(2.0, 1.0)]
    judge = StageJudge("entail", IdsEngine(drop={1}), cache)
    (key,) = judge.keys([_call(parts)])
    # What the modality-total check let through and cached: audio above zero, one part lost.
    old = CachedVerdict(
        "ok", '{"label":"YES"}', '{"label":"YES"}', None, 60, 3, reached=json.dumps({"audio": 50})
    )
    cache.put_many([(key, "entail", judge.engine.identity, old)])
    (out,) = judge.run([_call(parts)])
    assert not out.cached and out.error and out.error.startswith("audio 0:02-0:03:"), out
    assert judge.counters.cache_rejected == 1 and judge.counters.cache_hits == 0


def test_a_cached_verdict_whose_stored_parts_fall_short_is_judged_again(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    parts = [audio(0.0, 2.0)]
    judge = StageJudge("entail", IdsEngine(), cache)
    (key,) = judge.keys([_call(parts)])
    stored = {"parts": [CitedTokens("audio 0:00-0:02", "audio", 50, 1).as_list()]}
    row = CachedVerdict(
        "ok",
        '{"label":"NO"}',
        '{"label":"NO"}',
        None,
        10,
        3,
        reached=json.dumps({"audio": 1}),
        cited=json.dumps(stored),
    )
    cache.put_many([(key, "entail", judge.engine.identity, row)])
    (out,) = judge.run([_call(parts)])
    assert out.ok and not out.cached and judge.counters.cache_rejected == 1
