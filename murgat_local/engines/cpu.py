"""The CPU the CPU route runs on: its model, cores and the instruction sets vLLM's CPU build
cares about, and the dtype that is fastest there.

vLLM's CPU build carries kernels for AVX-512 with bf16 (and AMX) and for AVX2. On AVX2 alone,
bfloat16 has no arithmetic of its own: every bf16 matmul and attention step converts through
float32. So the CPU route runs bfloat16 where the CPU has avx512_bf16 or AMX, and float32
elsewhere (docs/performance.md, "Choosing for the CPU", has the measurements). A preset's
`cpu_dtype`, or the dtype a user gives, overrides the choice. Pure: reads /proc/cpuinfo (or the
text given) and nothing else.
"""

from __future__ import annotations

import functools
import os
import pathlib
import platform
from dataclasses import dataclass

# The flags that decide which kernels run, as /proc/cpuinfo names them, and how they print.
FLAGS = {
    "avx2": "avx2",
    "avx512f": "avx512f",
    "avx512_bf16": "avx512_bf16",
    "amx_bf16": "amx",
}
# Set by the benchmarks' AVX2 emulation (`scripts/bench_engine.py --emulate avx2`): the flags
# read here then are those of an AVX2-only CPU, as the kernels see it.
EMULATE_ENV = "MURGAT_EMULATE_CPU"
_AVX512 = ("avx512f", "avx512_bf16", "amx_bf16")


@dataclass(frozen=True)
class CpuInfo:
    model: str
    cores: int
    flags: frozenset[str]  # the `FLAGS` keys this CPU has
    emulated: str | None = None  # "avx2": AVX-512 hidden from the kernels for a measurement

    @property
    def native_bf16(self) -> bool:
        """Whether bfloat16 has arithmetic of its own here (AVX-512 bf16, or AMX)."""
        return "avx512_bf16" in self.flags or "amx_bf16" in self.flags

    def isa(self) -> list[str]:
        """The instruction sets that matter, as printed: avx2, avx512f, avx512_bf16, amx."""
        return [FLAGS[f] for f in FLAGS if f in self.flags]

    def line(self) -> str:
        """One line naming the machine, for a benchmark's output or `murgat smoke`."""
        isa = " ".join(self.isa()) or "no avx2"
        extra = f" (emulating {self.emulated} only)" if self.emulated else ""
        return f"{self.model}, {self.cores} cores, {isa}{extra}"

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "cores": self.cores,
            "isa": self.isa(),
            "emulated": self.emulated,
            "dtype": best_dtype(self)[0],
        }


def parse_cpuinfo(text: str, cores: int | None = None, emulate: str | None = None) -> CpuInfo:
    """A CpuInfo from the text of /proc/cpuinfo (the first processor's model name and flags)."""
    model, flags = "", set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
    have = {f for f in FLAGS if f in flags}
    if emulate == "avx2":
        have -= set(_AVX512)
    return CpuInfo(
        model=model or platform.processor() or platform.machine() or "unknown CPU",
        cores=cores if cores is not None else (os.cpu_count() or 1),
        flags=frozenset(have),
        emulated=emulate if emulate == "avx2" else None,
    )


@functools.cache
def cpu_info() -> CpuInfo:
    """This machine's CPU (cores: those this process may run on)."""
    path = pathlib.Path("/proc/cpuinfo")
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return parse_cpuinfo(text, cores, os.environ.get(EMULATE_ENV) or None)


def best_dtype(info: CpuInfo) -> tuple[str, str]:
    """(dtype, why) for vLLM's CPU build on this CPU."""
    if info.native_bf16:
        return "bfloat16", "bf16 arithmetic on this CPU (avx512_bf16 or AMX)"
    return "float32", "no bf16 arithmetic on this CPU: bfloat16 would convert at every step"


def emulation_env(kind: str, sitecustomize_dir: str, env: dict) -> dict:
    """`env` for processes that see an AVX2-only CPU (`kind` "avx2"): oneDNN and ATen dispatch
    no further than AVX2, and the folder holding the benchmarks' `sitecustomize.py` (which
    makes torch's ISA queries answer no, so vLLM loads its AVX2 kernels) goes first on
    PYTHONPATH. A measuring aid for the benchmarks, never set by murgat itself."""
    if kind != "avx2":
        raise ValueError(f"can emulate avx2 only, not {kind!r}")
    out = dict(env)
    out.update({EMULATE_ENV: kind, "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"})
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [sitecustomize_dir, env.get("PYTHONPATH")]))
    return out


__all__ = ["CpuInfo", "best_dtype", "cpu_info", "emulation_env", "parse_cpuinfo"]
