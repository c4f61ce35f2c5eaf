"""Where `--engine transformers` runs: the GPU in the preset's dtype when there is one, else the
CPU in float32; the choice is in its identity, so a cache never mixes the two.

The choice is a pure function of (a GPU is present, the preset's dtype, a dtype asked for); the
identity is checked with the GPU's presence stated, as this machine has none.
"""

from __future__ import annotations

import pytest
from support.paths import require_model

from murgat_local.engines import LazyEngine, identity, load_preset
from murgat_local.engines.identity import transformers_placement


def test_on_the_cpu_float32_unless_asked_otherwise():
    assert transformers_placement(False, "bfloat16") == (None, "float32")
    assert transformers_placement(False, None) == (None, "float32")
    assert transformers_placement(False, "bfloat16", "bfloat16") == (None, "bfloat16")


def test_on_a_gpu_the_presets_dtype_with_a_device_map():
    assert transformers_placement(True, "bfloat16") == ("auto", "bfloat16")
    assert transformers_placement(True, "float16") == ("auto", "float16")
    assert transformers_placement(True, None) == ("auto", "auto")  # the checkpoint's own dtype
    assert transformers_placement(True, "auto") == ("auto", "auto")
    assert transformers_placement(True, "bfloat16", "float32") == ("auto", "float32")


@pytest.fixture
def gemma():
    require_model("tiny-gemma4")
    return load_preset("tiny-gemma4")  # dtype = "bfloat16" in its [engine]


def test_the_identity_names_the_device_and_dtype_it_runs(gemma, monkeypatch):
    monkeypatch.setattr(identity, "cuda_available", lambda: False)
    cpu = LazyEngine("transformers", gemma)
    assert cpu.identity_detail["engine_args"] == {"device": "cpu", "dtype": "float32", "seed": 0}
    monkeypatch.setattr(identity, "cuda_available", lambda: True)
    gpu = LazyEngine("transformers", gemma)
    assert gpu.identity_detail["engine_args"] == {"device": "cuda", "dtype": "bfloat16", "seed": 0}
    assert gpu.identity != cpu.identity
    # The same dtype on either device is still two identities: the kernels differ.
    gpu32 = LazyEngine("transformers", gemma, dtype="float32")
    assert gpu32.identity not in (cpu.identity, gpu.identity)
