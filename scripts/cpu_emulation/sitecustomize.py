"""Makes this process, and every process it starts with this folder on PYTHONPATH, behave as on
a CPU without AVX-512 (AVX2 only): torch's ISA queries answer no (so vLLM's CPU build loads its
AVX2 kernels, `vllm._C_AVX2`), and oneDNN and ATen dispatch no further than AVX2 (their own
environment variables, set by `scripts/bench_engine.py --emulate avx2`). A measuring aid for
machines that have AVX-512, never used by murgat itself."""

import os

if os.environ.get("MURGAT_EMULATE_CPU") == "avx2":
    try:
        import torch

        for name in (
            "_is_avx512_supported",
            "_is_vnni_supported",
            "_is_avx512_bf16_supported",
            "_is_amx_tile_supported",
            "_is_amx_fp16_supported",
        ):
            if hasattr(torch.cpu, name):
                setattr(torch.cpu, name, lambda: False)
    except ImportError:
        pass
