"""The check `murgat smoke --reach` makes, run on engines the engine tests already started."""

from __future__ import annotations

from murgat_local.judges.reach_probe import (
    AUDIO_IN_VIDEO,
    placeholder_ids,
    reach_probes,
    reach_rows,
)

# What the probe finds never reaching a local test model, asserted as found (so a model that
# gets fixed fails here). Empty: tiny-gemma3's images did not reach it until its builder stopped
# leaving the multimodal projector at zeros (scripts/tiny_models/gemma3.py, REVISION 2).
KNOWN_UNREACHED: dict[str, set[str]] = {}


def check_reach(preset, eng, media_root) -> list[dict]:
    """Every media modality the engine runs moves the decision token when it is neutralised,
    the two prompts are the same length, and each holds the same number of the modality's
    placeholders (more than none). An omni model's soundtrack beside its clip moves it too."""
    runtime = getattr(eng, "preset", preset)  # vLLM's CPU build runs fewer towers
    media = [m for m in ("image", "video", "audio") if m in runtime.modalities]
    if {"video", "audio"} <= runtime.modalities:
        media.append(AUDIO_IN_VIDEO)
    rows = reach_rows(
        preset.name, eng, reach_probes(media_root, runtime.modalities), placeholder_ids(preset.path)
    )
    assert [r["modality"] for r in rows] == media
    for r in rows:
        if r["modality"] in KNOWN_UNREACHED.get(preset.name, ()):
            assert r["moved"] is False and r["delta"] == 0.0, r
        else:
            assert r["moved"] is True and r["delta"] > r["noise"], r
        assert r["tokens"][0] == r["tokens"][1] > 0, r
        sent = {AUDIO_IN_VIDEO: {"video", "audio"}}.get(r["modality"], {r["modality"]})
        if runtime.quirks.video_as_images:
            sent = {"image" if m == "video" else m for m in sent}
        assert set(r["placeholders"]) == sent, r
        assert all(cut == blank > 0 for cut, blank in r["placeholders"].values()), r
    return rows
