"""The error contract of `engines/base.py`, checked the same way on every registered engine.

One batch holds a good request, a refused one (a modality the text model does not take) and a
failed one (an output constraint no grammar compiler accepts). Every engine must return three
results in order, judge the good one, refuse and fail the other two with their reasons, raise
nothing, and stay usable. Every engine of the vLLM runtime refuses a prompt past the preset's
context before the engine, with the same reason. Engines with a per-request timeout must report one as "timed out".
Each engine runs for real on SmolLM2-135M: in-process, on `vllm serve`, on two replicas, on Ray.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from support.paths import require_model
from support.route_checks import ROUTES, record_route

from murgat_local.engines import ImagePart, LazyEngine, Request, engine_names, load_preset
from murgat_local.engines.base import REFUSED, TIMED_OUT
from murgat_local.judges import YesNo

pytestmark = [pytest.mark.engine, pytest.mark.slow]

MODEL = "smollm2-135m-instruct"


def test_every_registered_engine_is_covered():
    assert set(engine_names()) == set(OPTIONS)


# Own engine: a `vllm serve` process for the openai engine's contract; the pool holds no servers.
@pytest.fixture(scope="module")
def server():
    from murgat_local.serving import ServerProcess

    require_model(MODEL)
    with ServerProcess(load_preset(MODEL), env=dict(os.environ)) as s:
        yield s


OPTIONS = {
    "vllm": lambda server: {},
    "transformers": lambda server: {},
    "openai": lambda server: {"base_url": server.base_url},
    "replicas": lambda server: {"data_parallel": 2},
    "ray": lambda server: {"local_cpus": 4},
}


POOLED = ("vllm", "transformers")

# The good request's p_yes per engine, compared across routes below.
P_YES: dict[str, float] = {}


def batch():
    good = Request("Is the sky blue? Answer YES or NO.", YesNo)
    refused = Request("Is this red?", YesNo, media=(ImagePart(np.zeros((32, 32, 3), np.uint8)),))
    failed = Request("Say anything.", pattern="(unclosed[")  # no grammar compiler takes this
    return [good, refused, failed]


@pytest.mark.parametrize("kind", sorted(OPTIONS))
def test_refused_and_failed_requests_come_back_in_place_and_the_engine_goes_on(
    kind, request, prompt_ledger, engine_pool
):
    require_model(MODEL)
    if kind == "ray":
        pytest.importorskip("ray")
    srv = request.getfixturevalue("server") if kind == "openai" else None
    # The in-process engines come from the session's pool (test_engine_vllm and
    # test_engine_transformers run their SmolLM2 checks on the same ones); the others are this
    # test's own: a server, two replicas and a Ray job are started for the contract alone.
    pooled = kind in POOLED
    holder = None if pooled else LazyEngine(kind, load_preset(MODEL), **OPTIONS[kind](srv))
    try:
        engine = engine_pool.get(MODEL, kind) if pooled else holder.get()
        calls_before = engine.stats.calls  # a pooled engine counts other modules' calls too
        good, refused, failed = engine.judge(batch())
        assert good.ok and good.verdict.label in ("YES", "NO"), good
        # Every route reads the yes/no verdict's confidence from the engine's log-probabilities.
        assert good.p_yes is not None and 0.0 <= good.p_yes <= 1.0, good
        P_YES[kind] = good.p_yes
        assert refused.error and refused.error.startswith(REFUSED) and "image" in refused.error, (
            refused
        )
        assert failed.error and not failed.ok, failed
        assert not failed.error.startswith(TIMED_OUT)
        if (
            kind != "transformers"
        ):  # the vLLM runtime's limits, checked the same way wherever it runs
            (wordy,) = engine.judge([Request("Claim: " + "red " * 6000, YesNo)])
            assert (
                wordy.error
                and wordy.error.startswith(f"{REFUSED} before the engine")
                and "max_model_len=4096" in wordy.error
            ), wordy
        again = engine.judge([batch()[0]])  # still usable
        assert len(again) == 1 and again[0].ok
        assert engine.stats.calls - calls_before >= 2
        if kind in ROUTES:  # its prompts, for tests/test_serve_prompt_routes.py
            record_route(prompt_ledger, kind, load_preset(MODEL), engine)
    finally:
        if holder is not None:
            holder.close()


def test_the_in_process_engine_and_vllm_serve_give_the_same_p_yes():
    """The same request on the same model: one p_yes, whichever vLLM route reads it (the
    engines above ran it; this compares what they read)."""
    if not {"vllm", "openai"} <= set(P_YES):
        pytest.skip("needs the vllm and openai runs of the contract test above")
    assert P_YES["openai"] == pytest.approx(P_YES["vllm"], abs=1e-3)
    for kind in ("replicas", "ray"):
        if kind in P_YES:
            assert P_YES[kind] == pytest.approx(P_YES["vllm"], abs=1e-3), kind


def test_a_request_past_its_timeout_is_reported_as_timed_out(server):
    """The server engine's per-request timeout: no answer in time, after its retries."""
    holder = LazyEngine(
        "openai", load_preset(MODEL), base_url=server.base_url, timeout_s=0.001, retries=1
    )
    results = holder.get().judge([Request("Write a long story about the sea.")])
    assert len(results) == 1 and results[0].error and results[0].error.startswith(TIMED_OUT), (
        results
    )
