"""The package data is found in the checkout."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


PRESETS = sorted(p.stem for p in (ROOT / "models").glob("*.toml"))


def test_package_data_found_in_the_checkout():
    from murgat_local.engines.presets import PRESETS_DIR, available_presets
    from murgat_local.judges.prompts import PROMPTS_DIR, load_prompt

    assert isinstance(PRESETS_DIR, pathlib.Path) and isinstance(PROMPTS_DIR, pathlib.Path)
    assert available_presets() == PRESETS
    assert (PROMPTS_DIR / "entail.toml").read_bytes() == (
        ROOT / "prompts" / "entail.toml"
    ).read_bytes()
    assert load_prompt("entail").name == "entail"
