"""Does `murgat models --fit NAME --kv-cache-bytes B --max-model-len L` give the KV token
capacity vLLM's engine reports when it starts with that cache and context? Starts each named
model once on this machine (30-60 s each) and prints one JSON line per model.

    .venv/bin/python scripts/check_kv_tokens.py [--kv-cache-bytes B] [--max-model-len L] NAME...
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def engine_tokens(name: str, cache_bytes: int, length: int) -> dict:
    """What vLLM's engine core itself recorded at start: its token capacity and block count."""
    from murgat_local.engines import load_preset, make_engine

    engine = make_engine(
        "vllm", load_preset(name), kv_cache_memory_bytes=cache_bytes, max_model_len=length
    )
    try:
        cache = engine.llm.llm_engine.vllm_config.cache_config
        return {
            "engine_kv_tokens": cache.kv_cache_size_tokens,
            "engine_blocks": cache.num_gpu_blocks,
            "engine_block_size": cache.block_size,
        }
    finally:
        engine.close()


def murgat_tokens(name: str, cache_bytes: int, length: int) -> dict:
    from murgat_local.engines import load_preset
    from murgat_local.engines.fit_capacity import capacity
    from murgat_local.engines.identity import vllm_cpu_build

    device = "cpu" if vllm_cpu_build() else "cuda"
    found = capacity(load_preset(name), cache_bytes, device, options={"max_model_len": length})
    return found.as_json() if found else {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="+")
    parser.add_argument("--kv-cache-bytes", type=int, default=64 * 1024**2)
    parser.add_argument("--max-model-len", type=int, default=1024)
    args = parser.parse_args()
    # The engine core in this process, so that its config (where it records the capacity it
    # logs) is the one read here.
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    bad = 0
    for name in args.names:
        ours = murgat_tokens(name, args.kv_cache_bytes, args.max_model_len)
        theirs = engine_tokens(name, args.kv_cache_bytes, args.max_model_len)
        same = ours.get("kv_tokens") == theirs["engine_kv_tokens"]
        bad += not same
        print(json.dumps({"name": name, "same": same, **ours, **theirs}), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
