"""One module per model family; each builds one tiny random-weight checkpoint.

A family module defines `NAME` (the `--only` key), `DIR_NAME` (the folder, `tiny-<family>`),
`build(directory, lines, seed)` and `check(config, processor, checks)`. Adding a family is one
new module and one line in `FAMILIES`.
"""

from __future__ import annotations

import importlib

# In build order: the first two are the project's original test models.
FAMILIES = ("qwen3_omni", "gemma3", "gemma4", "qwen3_vl", "qwen2_audio", "qwen2_5_omni")


def family_modules() -> dict:
    """NAME -> module, every family registered here."""
    modules = [importlib.import_module(f"{__name__}.{m}") for m in FAMILIES]
    return {m.NAME: m for m in modules}
