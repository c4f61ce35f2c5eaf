"""Each cited part's expected placeholder tokens, measured with the local test models' own
processors (`engines.expect.PartTokens`; no engine started), against counts written out from
the models' published configurations: Whisper's 10 ms frames halved twice for Qwen audio,
14-pixel patches merged 2x2 for a Qwen image, Gemma 3's `mm_tokens_per_image` per image."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.paths import require_model

from murgat_local.engines import AudioPart, ImagePart, Request, VideoPart, load_preset
from murgat_local.engines.expect import PartTokens
from murgat_local.engines.reach import placeholder_tokens
from murgat_local.engines.render import ChatRenderer, adapted


def counter(name: str) -> PartTokens:
    require_model(name)
    preset = load_preset(name)
    renderer = ChatRenderer(preset.path, preset)
    return PartTokens(preset, renderer, placeholder_tokens(preset.path, renderer.tokenizer))


def tone(seconds: float) -> AudioPart:
    n = int(seconds * 16000)
    return AudioPart((0.3 * np.sin(np.arange(n) / 5)).astype(np.float32))


def qwen_audio_tokens(seconds: float) -> int:
    frames = int(seconds * 16000) // 160  # the feature extractor's hop: 10 ms
    after_conv = (frames - 1) // 2 + 1
    return (after_conv - 2) // 2 + 1  # the encoder's pooling halves it again


@pytest.fixture(scope="module")
def omni() -> PartTokens:
    return counter("tiny-qwen2.5-omni")


def test_qwen_omni_audio_tokens_follow_its_feature_frames(omni):
    parts = (tone(2.0), tone(1.0), tone(0.5))
    assert omni.expected(Request("x", media=parts)) == [
        ("audio", qwen_audio_tokens(2.0)),
        ("audio", qwen_audio_tokens(1.0)),
        ("audio", qwen_audio_tokens(0.5)),
    ]
    assert qwen_audio_tokens(2.0) == 50


def test_qwen_omni_image_tokens_are_its_patches_after_the_merge(omni):
    side = 56  # a multiple of 28 above the processor's minimum: not resized
    (found,) = omni.expected(Request("x", media=(ImagePart(np.zeros((side, side, 3), np.uint8)),)))
    assert found == ("image", (side // 14) ** 2 // 4)


def test_qwen_omni_clip_tokens_grow_with_its_frame_pairs(omni):
    four = VideoPart(np.zeros((4, 56, 56, 3), np.uint8), 2.0)
    eight = VideoPart(np.zeros((8, 56, 56, 3), np.uint8), 2.0)
    (a,), (b,) = (omni.expected(Request("x", media=(v,))) for v in (four, eight))
    assert a[0] == b[0] == "video" and a[1] > 0 and b[1] == 2 * a[1]


def test_gemma3_places_its_fixed_tokens_per_image_and_per_frame_of_a_clip():
    gemma = counter("tiny-gemma3")
    config = json.loads((gemma.preset.path / "config.json").read_text(encoding="utf-8"))
    per_image = config["mm_tokens_per_image"]
    clip = VideoPart(np.zeros((4, 40, 60, 3), np.uint8), 2.0)
    frame = ImagePart(np.zeros((40, 60, 3), np.uint8), t=1.0)
    asked = Request("x", media=(frame, clip))
    sent, blocks = adapted(asked, gemma.preset)  # the clip goes as its four frames
    assert blocks == (1, 4) and len(sent.media) == 5
    assert gemma.expected(sent, blocks) == [("image", per_image), ("image", 4 * per_image)]


def test_audio_sent_in_windows_expects_the_windows_tokens_together():
    qwen2 = counter("tiny-qwen2-audio")
    seconds = qwen2.preset.quirks.max_audio_seconds
    asked = Request("x", media=(tone(seconds + 1.0),))
    sent, blocks = adapted(asked, qwen2.preset)
    assert blocks == (2,)
    assert qwen2.expected(sent, blocks) == [
        ("audio", qwen_audio_tokens(seconds) + qwen_audio_tokens(1.0))
    ]


def test_without_a_processor_or_placeholders_the_expectation_is_unknown_with_why():
    require_model("tiny-qwen2.5-omni")
    preset = load_preset("tiny-qwen2.5-omni")
    parts = Request("x", media=(tone(1.0),))
    assert PartTokens(preset, None, {1: "audio"}).expected(parts) == (
        "the model's processor is not readable here"
    )
    renderer = ChatRenderer(preset.path, preset)
    assert PartTokens(preset, renderer, {}).expected(parts) == (
        "the model's placeholder tokens are not known"
    )


def test_a_template_without_the_placeholder_gives_no_expectation(tmp_path):
    import shutil

    require_model("tiny-qwen2.5-omni")
    preset = load_preset("tiny-qwen2.5-omni")
    folder = tmp_path / "m"
    shutil.copytree(preset.path, folder)
    template = folder / "chat_template.jinja"
    text = template.read_text(encoding="utf-8")
    template.write_text(text.replace("<|audio_bos|><|AUDIO|><|audio_eos|>", ""), encoding="utf-8")
    renderer = ChatRenderer(folder, preset)
    found = PartTokens(preset, renderer, placeholder_tokens(folder)).expected(
        Request("x", media=(tone(1.0),))
    )
    assert isinstance(found, str) and "places no audio placeholder tokens" in found


def test_a_ray_row_carries_each_parts_expected_and_arrived_tokens_back_to_the_driver():
    """The Ray route without a cluster: a worker measures the parts it sends (`_preprocess`)
    and splits vLLM's prompt ids into them (`_postprocess`); the driver names them."""
    import pickle

    from murgat_local.engines.ray import _cited
    from murgat_local.engines.ray_rows import _postprocess, _preprocess
    from murgat_local.engines.reach import short

    require_model("tiny-qwen2.5-omni")
    preset = load_preset("tiny-qwen2.5-omni")
    first, second = (
        AudioPart(tone(2.0).waveform, start=0.0),
        AudioPart(tone(1.0).waveform, start=2.0),
    )
    asked = Request("x", media=(first, second))
    row = {"idx": 0, "prompt_ids": [1, 2], "sampling": "{}", "request": pickle.dumps(asked)}
    prepared = _preprocess(
        {**row, "blocks": json.dumps([1, 1])}, [1], preset, {"max_model_len": 4096}
    )
    assert json.loads(prepared["expected"]) == {"parts": [["audio", 50], ["audio", 25]]}
    marks = placeholder_tokens(preset.path)
    (audio_id,) = [t for t, m in marks.items() if m == "audio"]
    # vLLM's prompt ids with the second clip lost on the way.
    ids = [5, 6, *[audio_id] * 50, 7, 5]
    done = _postprocess({**prepared, "prompt_token_ids": ids}, marks)
    fields = _cited(asked, done["cited"])
    assert [(c.citation, c.expected, c.arrived) for c in fields["cited"]] == [
        ("audio 0:00-0:02", 50, 50),
        ("audio 0:02-0:03", 25, 0),
    ]
    assert short(fields["cited"], {"audio": 50}) == (
        "audio 0:02-0:03: expected 25 audio tokens, 0 arrived"
    )
