#!/usr/bin/env python
"""Build tiny random-weight multimodal checkpoints, fully offline and deterministically.

One complete Hugging Face model folder per family is written under ``--out``, named
``tiny-<family>``: ``config.json``, ``generation_config.json``, safetensors weights, a tokenizer
trained here on a built-in English corpus, processor configs and a Jinja chat template. Each
loads in ``vllm.LLM(model=dir)`` on the CPU (and in transformers where the family runs there).
They exercise the engine path in tests: the weights are random, so the outputs mean nothing.
Each family's builder is one module of ``scripts/tiny_models/``.

Usage::

    .venv/bin/python scripts/build_tiny_models.py --out .local/models [--only gemma4 ...]

Nothing is downloaded. The same seed gives byte-identical weights and tokenizers; a folder
already built with the same seed is left alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Single-threaded tokenizer training and torch init keep the build reproducible and light.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_models import family_modules
from tiny_models.common import Checks, dir_size, normalise_permissions
from tiny_models.corpus import corpus_lines

DEFAULT_SEED = 20240917
# Every tiny checkpoint must stay small enough to build at set-up and carry in tests.
MAX_BYTES = 10_000_000


def verify(directory: Path, family) -> None:
    """Reload what was written and check the ids and sizes the engines rely on."""
    from transformers import AutoConfig, AutoProcessor

    config = AutoConfig.from_pretrained(directory)
    processor = AutoProcessor.from_pretrained(directory)
    checks = Checks(getattr(processor, "tokenizer", processor))
    family.check(config, processor, checks)
    size = dir_size(directory)
    if size > MAX_BYTES:
        checks.add(f"{size} bytes, over the {MAX_BYTES} a tiny checkpoint may take")
    if checks.problems:
        raise RuntimeError(f"{directory}: " + "; ".join(checks.problems))


def build_one(out: Path, family, lines: list[str], seed: int, force: bool) -> None:
    target = out / family.DIR_NAME
    # A family whose builder changed what it writes says so (REVISION), so folders built before
    # are built again; families that never changed keep their first stamp.
    revision = getattr(family, "REVISION", 1)
    stamp = f"seed={seed}\n" + (f"revision={revision}\n" if revision > 1 else "")
    if not force and (target / ".built").is_file() and (target / ".built").read_text() == stamp:
        print(f"{target}: already built", flush=True)
        return
    started = time.perf_counter()
    # Build into a scratch folder beside the target, then swap it in.
    with tempfile.TemporaryDirectory(prefix=f".{family.DIR_NAME}-", dir=out) as scratch:
        staging = Path(scratch) / family.DIR_NAME
        staging.mkdir()
        family.build(staging, lines, seed)
        verify(staging, family)
        normalise_permissions(staging)
        (staging / ".built").write_text(stamp)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(staging), str(target))
    took = time.perf_counter() - started
    print(f"built {target} ({dir_size(target) / 1e6:.1f} MB) in {took:.1f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    families = family_modules()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(".local/models"), help="output folder")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    parser.add_argument(
        "--only",
        choices=list(families),
        action="append",
        help="build only this family (repeatable); default: every family",
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if already built")
    args = parser.parse_args(argv)

    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)

    args.out.mkdir(parents=True, exist_ok=True)
    lines = corpus_lines(args.seed)
    for name in args.only or list(families):
        build_one(args.out, families[name], lines, args.seed, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
