"""The CPU route's dtype follows the CPU: bfloat16 only where it has bf16 arithmetic."""

from __future__ import annotations

import pathlib

import pytest

from murgat_local.engines import LazyEngine, load_preset
from murgat_local.engines import cpu as cpu_mod
from murgat_local.engines.cpu import best_dtype, parse_cpuinfo
from murgat_local.engines.identity import effective_args, vllm_cpu_build

EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi1 bmi2
processor\t: 1
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi1 bmi2
"""
SAPPHIRE = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8481C
flags\t\t: fpu sse2 avx avx2 avx512f avx512dq avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8
"""
SKYLAKE = """model name\t: Intel(R) Xeon(R) Gold 6148
flags\t\t: fpu sse2 avx avx2 avx512f avx512dq avx512bw avx512vl
"""


def test_the_flags_that_decide_the_kernels_are_read_and_named():
    epyc = parse_cpuinfo(EPYC, cores=2)
    assert epyc.model == "AMD EPYC 7B13" and epyc.isa() == ["avx2"]
    assert epyc.line() == "AMD EPYC 7B13, 2 cores, avx2"
    spr = parse_cpuinfo(SAPPHIRE, cores=2)
    assert spr.isa() == ["avx2", "avx512f", "avx512_bf16", "amx"]
    sky = parse_cpuinfo(SKYLAKE, cores=4)
    assert sky.isa() == ["avx2", "avx512f"] and not sky.native_bf16


def test_bfloat16_only_where_the_cpu_has_bf16_arithmetic():
    assert best_dtype(parse_cpuinfo(EPYC))[0] == "float32"
    assert best_dtype(parse_cpuinfo(SKYLAKE))[0] == "float32"  # AVX-512 without bf16
    assert best_dtype(parse_cpuinfo(SAPPHIRE))[0] == "bfloat16"
    emulated = parse_cpuinfo(SAPPHIRE, emulate="avx2")
    assert emulated.isa() == ["avx2"] and best_dtype(emulated)[0] == "float32"
    assert "emulating avx2" in emulated.line()


def test_this_machines_reading_agrees_with_torchs_own():
    """torch asks the CPU itself (cpuinfo), not /proc/cpuinfo's text."""
    torch = pytest.importorskip("torch")
    if not pathlib.Path("/proc/cpuinfo").is_file():
        pytest.skip("no /proc/cpuinfo")
    info = parse_cpuinfo(pathlib.Path("/proc/cpuinfo").read_text())
    assert ("avx2" in info.flags) == torch.cpu._is_avx2_supported()
    assert ("avx512f" in info.flags) == torch.cpu._is_avx512_supported()
    assert ("avx512_bf16" in info.flags) == torch.cpu._is_avx512_bf16_supported()


@pytest.mark.parametrize("text,dtype", [(EPYC, "float32"), (SAPPHIRE, "bfloat16")])
def test_the_cpu_route_runs_the_cpus_dtype_and_the_identity_keeps_it(monkeypatch, text, dtype):
    if not vllm_cpu_build():
        pytest.skip("the choice applies to vLLM's CPU build")
    monkeypatch.setattr(cpu_mod, "cpu_info", lambda: parse_cpuinfo(text, cores=2))
    preset = load_preset("smollm2-135m-instruct")
    assert preset.engine_args["dtype"] == "bfloat16"  # the GPU's, in the preset
    assert effective_args("vllm", preset, {})["dtype"] == dtype
    # the user's dtype wins, and so does a preset's cpu_dtype
    assert effective_args("vllm", preset, {"dtype": "float16"})["dtype"] == "float16"
    pinned = preset.__class__(**{**preset.__dict__, "cpu_dtype": "bfloat16"})
    assert effective_args("vllm", pinned, {})["dtype"] == "bfloat16"
    lazy = LazyEngine("vllm", preset)
    assert lazy.identity_detail["engine_args"]["dtype"] == dtype


def test_a_verdict_is_never_reused_across_dtypes(monkeypatch):
    if not vllm_cpu_build():
        pytest.skip("the choice applies to vLLM's CPU build")
    preset = load_preset("smollm2-135m-instruct")
    ids = set()
    for text in (EPYC, SAPPHIRE):
        monkeypatch.setattr(cpu_mod, "cpu_info", lambda text=text: parse_cpuinfo(text, cores=2))
        ids.add(LazyEngine("vllm", preset).identity)
    assert len(ids) == 2


def test_the_benchmarks_avx2_emulation_reaches_the_kernels_and_the_choice():
    from murgat_local.engines.cpu import emulation_env

    env = emulation_env("avx2", "/x/cpu_emulation", {"PYTHONPATH": "/y"})
    assert env["ONEDNN_MAX_CPU_ISA"] == "AVX2" and env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert env["PYTHONPATH"].split(":") == ["/x/cpu_emulation", "/y"]
    with pytest.raises(ValueError, match="avx2"):
        emulation_env("sse4", "/x", {})


def test_under_the_emulation_torch_and_vllm_see_no_avx512(tmp_path):
    """The emulation's sitecustomize, in a fresh interpreter: torch's own ISA queries (which
    vLLM's CPU platform asks to pick its kernels) answer no."""
    import os
    import subprocess
    import sys

    pytest.importorskip("torch")
    from murgat_local.engines.cpu import emulation_env

    folder = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "cpu_emulation"
    env = emulation_env("avx2", str(folder), dict(os.environ))
    code = (
        "import torch, json; from murgat_local.engines.cpu import cpu_info, best_dtype; "
        "print(json.dumps([torch.cpu._is_avx512_supported(), torch.cpu._is_avx512_bf16_supported(),"
        " best_dtype(cpu_info())[0]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == '[false, false, "float32"]'
