"""`murgat smoke --reach` without an engine: the probes cut from the sample media and their
neutralised twins, the comparison of two decision tokens, the record kept beside the models and
what `murgat models` shows of it. The probe itself runs on real engines in
tests/e2e/test_engine_vllm.py, tests/e2e/test_families_e2e.py, tests/e2e/test_serve_e2e.py and
tests/e2e/test_reach_serve_e2e.py."""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil

import numpy as np
import pytest
from support.paths import require_model
from support.tables import shown
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.judges.reach_probe import (
    AUDIO_IN_VIDEO,
    TOLERANCE,
    decision_logprobs,
    difference,
    placeholder_ids,
    reach_probes,
    unreached,
)
from murgat_local.judges.reach_record import RECORD, reach_status, record_reach
from murgat_local.media.parts import AudioPart, VideoPart
from murgat_local.reports.reach_probe import reach_table

ALL = frozenset({"text", "image", "video", "audio"})


def _arrays(request):
    return [
        getattr(m, "pixels", None)
        if not isinstance(m, (VideoPart, AudioPart))
        else (m.frames if isinstance(m, VideoPart) else m.waveform)
        for m in request.media
    ]


def test_each_modality_is_cut_from_the_sample_media_and_neutralised_with_its_shape_kept(media_root):
    probes = reach_probes(media_root, ALL)
    assert [p.modality for p in probes] == ["image", "video", "audio", AUDIO_IN_VIDEO]
    for p in probes:
        assert p.cut.prompt == p.blank.prompt and p.cut.choices == p.blank.choices == ("YES", "NO")
        cut, blank = _arrays(p.cut), _arrays(p.blank)
        assert [a.shape for a in cut] == [b.shape for b in blank]
        assert all(a.any() for a in cut)  # real frames and sound
    by = {p.modality: p for p in probes}
    assert not any(b.any() for m in ("image", "video", "audio") for b in _arrays(by[m].blank))
    # audio in video: the same clip both times, only its soundtrack muted
    clip, track = _arrays(by[AUDIO_IN_VIDEO].blank)
    assert np.array_equal(clip, _arrays(by[AUDIO_IN_VIDEO].cut)[0]) and not track.any()
    assert [p.modality for p in reach_probes(media_root, frozenset({"text", "image"}))] == ["image"]
    assert [p.modality for p in reach_probes(media_root, frozenset({"text", "audio"}))] == ["audio"]
    assert reach_probes(media_root, frozenset({"text"})) == []


def test_the_difference_of_two_top_k_vectors_never_overstates():
    a = {1: -0.1, 2: -2.0, 3: -3.0}
    assert difference(a, dict(a)) == 0.0
    assert difference(a, {1: -0.1, 2: -2.0005, 3: -3.0}) == pytest.approx(5e-4)
    # token 4 is not in a's top K: there it is at most a's lowest (-3.0), so it moved at least 2.5
    assert difference(a, {1: -0.1, 2: -2.0, 4: -0.5}) == pytest.approx(2.5)
    assert difference({1: -0.1}, {}) != difference({1: -0.1}, {})  # nan: nothing to compare


def test_the_decision_reads_the_same_from_masked_logits_or_a_servers_log_probabilities():
    """In process the engine returns masked logits, a server someone else started their
    log-softmax (masked tokens -9999 over HTTP): renormalised over the legal tokens, one
    vector, which the probe compares."""
    logits = {7: 3.0, 8: 1.5, 9: -math.inf, 10: -math.inf}
    legal = math.log(math.exp(3.0) + math.exp(1.5))
    served = {7: 3.0 - legal, 8: 1.5 - legal, 9: -9999.0, 10: -9999.0}
    a, b = decision_logprobs(logits), decision_logprobs(served)
    assert set(a) == set(b) == {7, 8}
    assert difference(a, b) == pytest.approx(0.0, abs=1e-12)
    assert math.fsum(math.exp(v) for v in a.values()) == pytest.approx(1.0)
    assert decision_logprobs({1: -math.inf}) == {}


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "tiny-qwen2.5-omni",
            {"image": 3012, "video": 3013, "audio": 3003},
        ),  # the thinker's, not the talker's
        ("tiny-gemma3", {"image": 10}),
        ("tiny-qwen2-audio", {"audio": 3003}),
        ("smollm2-135m-instruct", {}),
    ],
)
def test_placeholder_ids_come_from_the_models_config(name, expected):
    assert placeholder_ids(require_model(name)) == expected


def _row(modality, moved, **kw):
    return {
        "model": "m",
        "modality": modality,
        "moved": moved,
        "delta": 0.2 if moved else 0.0,
        "noise": 0.0,
        "tokens": [118, 118],
        "decision": ["Y", "N"],
        "placeholders": {"image": [80, 80]},
        **kw,
    }


def test_a_modality_that_never_moves_the_output_is_flagged():
    rows = [
        _row("image", True),
        _row("audio", False),
        {
            "model": "m",
            "modality": "video",
            "moved": None,
            "skipped": True,
            "error": "not run on this engine",
        },
        {"model": "m", "modality": "(start)", "moved": None, "error": "RuntimeError: no"},
    ]
    assert [r["modality"] for r in unreached(rows)] == ["audio", "(start)"]
    text = "\n".join(shown(reach_table(rows, "vllm"), width=200))
    assert (
        "NO (never reached)" in text
        and "118/118" in text
        and "image 80/80" in text
        and "FAILED" in text
    )
    assert TOLERANCE <= 1e-3


@pytest.fixture
def models_root(tmp_path):
    """A models root of its own, with a copy of one tiny model (the real one is never touched)."""
    shutil.copytree(require_model("tiny-qwen2.5-omni"), tmp_path / "tiny-qwen2.5-omni")
    return tmp_path


def _models_json(models_root):
    res = CliRunner().invoke(
        app, ["models", "--json"], env={**os.environ, "MURGAT_MODELS_DIR": str(models_root)}
    )
    assert res.exit_code == 0, res.output
    return {p["name"]: p for p in json.loads(res.output)}


def test_murgat_models_shows_what_reach_verified_here_until_the_weights_change(models_root):
    folder = models_root / "tiny-qwen2.5-omni"
    before = _models_json(models_root)["tiny-qwen2.5-omni"]["reach"]
    assert {m: s["text"] for m, s in before.items()} == dict.fromkeys(
        ["image", "video", "audio", AUDIO_IN_VIDEO], "not verified"
    )
    day = datetime.date(2026, 12, 5)
    path = record_reach(
        "tiny-qwen2.5-omni",
        folder,
        "vllm",
        [_row("image", True), _row(AUDIO_IN_VIDEO, False)],
        today=day,
    )
    record_reach(
        "tiny-qwen2.5-omni",
        folder,
        "openai",
        [_row("image", True)],
        today=day + datetime.timedelta(1),
    )
    assert path == models_root / RECORD
    reach = _models_json(models_root)["tiny-qwen2.5-omni"]["reach"]
    assert reach["image"]["text"] == "verified 2026-12-06 (openai, vllm)"
    assert reach[AUDIO_IN_VIDEO] == {
        "state": "did not reach",
        "date": "2026-12-05",
        "engines": ["vllm"],
        "text": "did not reach 2026-12-05 (vllm)",
    }
    assert reach["audio"]["text"] == "not verified"
    res = CliRunner().invoke(
        app, ["models"], env={**os.environ, "MURGAT_MODELS_DIR": str(models_root), "COLUMNS": "400"}
    )
    assert res.exit_code == 0 and "verified 2026-12-06 (openai, vllm)" in res.output, res.output
    # new weights: what was verified on the old ones no longer counts
    weights = folder / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    after = reach_status("tiny-qwen2.5-omni", folder, ["image"])
    assert after == {
        "image": {"state": "not verified", "date": None, "engines": [], "text": "not verified"}
    }


def test_reach_on_a_server_needs_its_url():
    res = CliRunner().invoke(
        app, ["smoke", "--reach", "--engine", "openai", "--model", "tiny-qwen2-audio"]
    )
    assert res.exit_code == 2 and "--base-url" in res.output
