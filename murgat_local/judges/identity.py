"""Who a judge is, for cache keys: computed from the model directory without loading it."""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib

from .presets import Preset


@functools.cache
def weights_fingerprint(path: pathlib.Path) -> str:
    """A cheap, content-sensitive identity of a model directory: every config, template and
    weight file's name, size, and first and last 64 KiB. Different weights never share it."""
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".jinja", ".model", ".txt"):
            st = f.stat()
            h.update(f"{f.name}:{st.st_size}".encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 16))
                if st.st_size > 1 << 17:
                    fh.seek(-(1 << 16), os.SEEK_END)
                    h.update(fh.read())
    return h.hexdigest()[:16]


# Engine arguments that change what a model generates (not merely how fast).
NUMERIC_ARGS = ("dtype", "quantization", "kv_cache_dtype", "max_model_len", "reasoning_parser")


def engine_identity(kind: str, preset: Preset, temperature: float, overrides: dict | None = None) -> str:
    """Model weights, the arguments that change its outputs, and the decoding settings."""
    path = preset.require_path().resolve()
    args = {**preset.engine_args, **(overrides or {})}
    numeric = ",".join(f"{k}={args[k]}" for k in NUMERIC_ARGS if k in args)
    quirks = f"think={preset.quirks.thinking},extra={preset.quirks.extra_output_tokens}"
    return f"{kind}:{preset.architecture}:{weights_fingerprint(path)}:t={temperature:g}:{numeric}:{quirks}"
