"""Checks shared by the engine tests (every engine x every local test model)."""

from __future__ import annotations

import numpy as np

from murgat_local.judges import (
    AtomicFacts,
    AudioPart,
    ImagePart,
    JudgeRequest,
    ReasonedYesNo,
    VideoPart,
    YesNo,
    load_preset,
    make_engine,
)
from murgat_local.judges.smoke import probe_requests
from support.paths import require_model

# In the order the shared modules meet them (tests/support/suite_order.py): the engine contract's
# SmolLM2 first and Gemma 3 last, which tests/e2e/test_engine_vllm_prompt_bos.py starts with, so
# the session's pool (one vLLM engine on two workers) hands each module on the engine the last
# one held rather than starting it again.
MODELS = ["smollm2-135m-instruct", "gemma3-270m", "tiny-qwen3-omni", "tiny-gemma3"]
# The newer families: under transformers here; under vLLM in tests/e2e/test_families_e2e.py, which
# starts each once for its engine checks, generation and scoring together.
FAMILIES = ["tiny-gemma4", "tiny-qwen3-vl", "tiny-qwen2-audio", "tiny-qwen2.5-omni"]
ALL = frozenset({"text", "image", "video", "audio"})


def _engine(kind, name):
    require_model(name)
    preset = load_preset(name)
    eng = make_engine(kind, preset)
    return preset, eng


def _check_every_modality(preset, eng):
    # The preset as this engine runs it: vLLM's CPU build cannot run some towers (cpu_refuses).
    runtime = getattr(eng, "preset", preset)
    probes = probe_requests(runtime.modalities)
    for modality, why in runtime.unavailable.items():  # refused with the reason, the engine goes on
        (res,) = eng.judge([r for m, r in probe_requests(preset.modalities) if m == modality])
        assert (
            res.error and f"cannot take {modality} on this engine" in res.error and why in res.error
        ), res
    refused = sorted(ALL - preset.modalities)
    extra = []
    for m in refused:
        part = {
            "image": ImagePart(np.zeros((32, 32, 3), np.uint8)),
            "video": VideoPart(np.zeros((2, 32, 32, 3), np.uint8), 2.0),
            "audio": AudioPart(np.zeros(1600, np.float32)),
        }[m]
        extra.append((m, JudgeRequest("Claim: x.", YesNo, None, (part,))))
    results = eng.judge([r for _, r in probes + extra])
    assert len(results) == len(probes) + len(extra)
    for (modality, _), res in zip(probes, results):
        assert res.ok, f"{preset.name} {modality}: {res}"
        assert res.verdict.label in ("YES", "NO") and res.output_tokens > 0
        # What reached the model, counted from the engine's own prompt ids: exactly what was sent.
        sent = "image" if modality == "video" and runtime.quirks.video_as_images else modality
        assert res.reached is not None and reached_modalities(res) == ({sent} - {"text"}), (
            f"{preset.name} {modality}: {res.reached}"
        )
        check_cited(res, f"{preset.name} {modality}")
    for (modality, _req), res in zip(extra, results[len(probes) :]):
        if preset.quirks.video_as_images and modality == "video" and "image" in preset.modalities:
            assert res.ok and reached_modalities(res) == {"image"}, res  # sent as separate frames
        else:
            assert res.error and f"does not accept {modality}" in res.error
    assert eng.stats.calls >= len(probes) and eng.stats.wall_s > 0


def check_cited(res, what: str) -> None:
    """A correct request's parts each arrived whole: the tokens the model's own processor places
    for each (`engines.expect`) are the tokens the engine's prompt ids hold for it."""
    if not res.reached or not any(res.reached.values()):
        return  # nothing cited
    assert res.cited is not None and res.cited_unknown is None, f"{what}: {res.cited_unknown}"
    assert all(c.expected == c.arrived > 0 for c in res.cited), f"{what}: {res.cited}"


def reached_modalities(res) -> set[str]:
    return {m for m, n in (res.reached or {}).items() if n}


def _check_structured_types(eng):
    reqs = [
        JudgeRequest("Split into facts: a tall man runs and a dog barks.", AtomicFacts),
        JudgeRequest("Is the sky blue?", ReasonedYesNo, "Give a short reason, then YES or NO."),
    ]
    facts, reasoned = eng.judge(reqs)
    assert facts.ok, facts
    assert 1 <= len(facts.verdict.facts) <= 6
    assert reasoned.ok, reasoned
    assert reasoned.verdict.reason and reasoned.verdict.label in ("YES", "NO")


def clip(frames, side=64):
    return VideoPart(np.full((frames, side, side, 3), 200, np.uint8), 2.0)


CLAIM = "Claim: the screen is red."


def fitting_requests() -> list:
    """For tiny-qwen3-omni (max_model_len 4096, at most 2 videos): a clip too long for the
    context, three clips, too many words, and one that fits as it is."""
    return [
        JudgeRequest(CLAIM, YesNo, None, (clip(64, 448),)),
        JudgeRequest(CLAIM, YesNo, None, (clip(2), clip(2), clip(2))),
        JudgeRequest("Claim: " + "red " * 6000, YesNo),
        JudgeRequest(CLAIM, YesNo, None, (clip(4),)),
    ]


def check_fitted(results) -> None:
    """What every engine of the vLLM runtime returns for `fitting_requests()`: the long clip
    judged with fewer frames and a note saying so, the other two oversized ones refused before
    the engine with their reasons, the small one untouched."""
    long_clip, three, wordy, fine = results
    assert long_clip.ok and long_clip.note == "frames reduced from 64 to 32 to fit max_model_len", (
        long_clip
    )
    assert long_clip.prompt_tokens <= 4096, long_clip
    assert (
        three.error
        and three.error.startswith("refused before the engine")
        and "video=2" in three.error
    ), three
    assert (
        wordy.error
        and wordy.error.startswith("refused before the engine")
        and "max_model_len=4096" in wordy.error
    )
    assert fine.ok and fine.note is None, fine
    check_cited(long_clip, "the clip with fewer frames")  # measured on the frames sent
    check_cited(fine, "the clip that fits")
    assert reached_modalities(long_clip) == reached_modalities(fine) == {"video"}, (
        long_clip.reached,
        fine.reached,
    )
