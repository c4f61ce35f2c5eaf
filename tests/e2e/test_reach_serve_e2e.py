"""`murgat smoke --reach` under `vllm serve` for the local test models no other test serves:
one server each (module-scoped, one alive at a time), probed through the OpenAI engine.
tiny-qwen3-omni is probed on tests/e2e/test_serve_e2e.py's server; the text-only models have no
modality to neutralise and get no server."""

from __future__ import annotations

import os

import pytest
from support.paths import require_model
from support.reach_checks import check_reach
from support.route_checks import record_route

from murgat_local.engines import load_preset
from murgat_local.engines.identity import vllm_cpu_build
from murgat_local.judges.smoke import LOCAL_TEST_MODELS
from murgat_local.serving import ServerProcess

pytestmark = [pytest.mark.engine, pytest.mark.slow]

SERVED_ELSEWHERE = {"tiny-qwen3-omni"}
NAMES = [
    m
    for m in LOCAL_TEST_MODELS
    if m not in SERVED_ELSEWHERE and load_preset(m).modalities - {"text"}
]


# Own engine: a `vllm serve` process per model, probed over HTTP; the pool holds no servers.
@pytest.fixture(scope="module", params=NAMES)
def served(request, tmp_path_factory):
    require_model(request.param)
    log = tmp_path_factory.mktemp("server") / "vllm-serve.log"
    with ServerProcess(load_preset(request.param), log=log, env=dict(os.environ)) as s:
        yield request.param, s


def test_every_modality_reaches_the_served_model(served, media_root):
    from murgat_local.engines.openai import OpenAIEngine

    name, server = served
    # A server on this machine runs this machine's build: Gemma 4's audio is not sent to it on the CPU.
    preset = load_preset(name).on_runtime(cpu=vllm_cpu_build())
    rows = check_reach(preset, OpenAIEngine(preset, base_url=server.base_url), media_root)
    assert name != "tiny-qwen2.5-omni" or rows[-1]["modality"] == "audio in video"


def test_the_served_prompts_are_recorded_for_the_cross_route_check(served, prompt_ledger):
    """What this route ran for the smoke probes (compared in test_serve_prompt_routes.py)."""
    from murgat_local.engines.openai import OpenAIEngine

    name, server = served
    runs = load_preset(name).on_runtime(cpu=vllm_cpu_build())
    seen = record_route(
        prompt_ledger, "openai", load_preset(name), OpenAIEngine(runs, base_url=server.base_url)
    )
    assert seen["text"][0] is not None
