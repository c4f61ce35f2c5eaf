"""The error contract of `engines/base.py`, checked the same way on every registered engine.

One batch holds a good request, a refused one (a modality the text model does not take) and a
failed one (an output constraint no grammar compiler accepts). Every engine must return three
results in order, judge the good one, refuse and fail the other two with their reasons, raise
nothing, and stay usable. Every engine of the vLLM runtime refuses a prompt past the preset's
context before the engine, with the same reason. Engines with a per-request timeout must report one as "timed out".
Each engine runs for real on SmolLM2-135M: in-process, on `vllm serve`, on two replicas, on Ray.
A yes/no verdict's p_yes is the same on every route for the same prompt ids, on SmolLM2 and on
Gemma-3-270m, and transformers reads it before temperature and top-p.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import math
import os

import numpy as np
import pytest
from support.paths import require_model
from support.route_checks import ROUTES, record_route

from murgat_local.engines import (
    ImagePart,
    LazyEngine,
    Request,
    Sampling,
    engine_names,
    load_preset,
)
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


# p_yes on the same prompt ids, whichever route reads it. SmolLM2 spells YES as Y + ES; under
# Gemma's grammar 7 tokens are legal where the label is decided (more than the top 5 once asked).
P_YES_MODELS = (MODEL, "gemma3-270m")
# vLLM runs the presets in bfloat16, transformers on the CPU in float32, and a vLLM batch's
# make-up changes how its rounding falls (bfloat16 keeps 8 significant bits). Compared as
# log-odds, the scale that noise acts on: on the same spelling of the key, routes differed by
# up to 0.16 (SmolLM2, float32 against bfloat16; 0.11 between two vLLM batches), Gemma by 0.08
# (2026-12-06). 0.25 allows that; it is p_yes within 0.06 at 0.5, 0.015 at 0.95. What misread
# p_yes was far outside it (top-p read after the warpers made 0.82 1.0), or now gives none (a
# top k that may miss a legal token), which fails below.
ACROSS_ROUTES_LOG_ODDS = 0.25


def log_odds(p: float) -> float:
    return math.log(p) - math.log1p(-p)


def claims() -> list[Request]:
    said = (
        "The sky is blue.",
        "Fish can fly.",
        "Paris is in Germany.",
        "Ice is cold.",
        "A week has seven days.",
        "The sun rises in the west.",
        "Cats are mammals.",
        "Two plus two is five.",
    )
    return [Request(f"Claim: {c}\nIs the claim true? Answer YES or NO.", YesNo) for c in said]


@pytest.mark.parametrize("model", P_YES_MODELS)
def test_transformers_reads_p_yes_before_temperature_and_top_p(model, engine_pool):
    """Sampled at temperature 1 with top-p 0.5, or at temperature 2 with top-k 1, the same
    verdicts give the greedy p_yes: read before the warpers that flatten the alternatives or
    cut them down (to one: p_yes read after them was 0 or 1). Both keep the greedy path here
    (top-k 1 always; top-p 0.5 where the top token holds half the mass, as it does on these
    prompts, seeded), so each verdict is decided in the same context."""
    require_model(model)
    engine = engine_pool.get(model, "transformers")
    asked = claims()[:4]
    greedy = engine.judge(asked)
    for temperature, top_p, top_k in ((1.0, 0.5, 0), (2.0, 1.0, 1)):
        sampling = Sampling(YesNo.max_tokens, temperature, top_p, top_k, seed=0)
        sampled = engine.judge([dataclasses.replace(r, sampling=sampling) for r in asked])
        for g, s in zip(greedy, sampled):
            assert g.ok and s.ok and g.p_yes is not None, (g, s)
            assert s.p_yes == pytest.approx(g.p_yes, abs=1e-6), (temperature, top_p, top_k, g, s)


@pytest.mark.parametrize("model", P_YES_MODELS)
def test_p_yes_is_the_same_on_every_route(model, request, engine_pool, monkeypatch):
    """The same requests in process (vLLM, asked the label tokens by id), on `vllm serve` asked
    the top k counted from the grammar (a server others share) and the label tokens by id (a
    replica's own server), on Ray (the top k) and under transformers: the same prompt ids, a
    p_yes on every route, and where two routes wrote the label's key in the same tokens (a near
    tie between spellings, `":"` or `":` then `"`, may fall either way in another precision or
    batch) one p_yes within the precision they compute in. SmolLM2's engines are the module's
    own server and the session's pool; Gemma's server starts here, and each Ray job starts its
    replica, one engine of this test's own at a time."""
    from murgat_local.engines import base, openai, ray, transformers, vllm
    from murgat_local.engines.confidence import deciding_token

    require_model(model)
    preset = load_preset(model)
    asked = claims()
    paths: dict[str, dict[str, tuple]] = {}  # route -> prompt -> the tokens before the letter

    def judged(route: str, engine) -> None:
        seen = paths.setdefault(route, {})

        def reading(req, result, steps):
            found = deciding_token(steps) if steps else None
            if found is not None:
                i, offset = found
                seen[req.prompt] = (*(s.token for s in steps[:i]), steps[i].token[:offset])
            return base.with_p_yes(req, result, steps)

        for module in (vllm, openai, ray, transformers):
            monkeypatch.setattr(module, "with_p_yes", reading)
        by_route[route] = engine.judge(asked)

    by_route: dict[str, list] = {}
    judged("vllm", engine_pool.get(model, "vllm"))
    judged("transformers", engine_pool.get(model, "transformers"))
    with contextlib.ExitStack() as stack:
        served = request.getfixturevalue("server") if model == MODEL else None
        if served is None:  # Own engine: Gemma's server, for this comparison alone
            from murgat_local.serving import ServerProcess

            served = stack.enter_context(ServerProcess(preset, env=dict(os.environ)))
        for route, by_id in (("served top k", False), ("served by id", True)):
            holder = LazyEngine("openai", preset, base_url=served.base_url, label_tokens=by_id)
            try:
                judged(route, holder.get())
            finally:
                holder.close()
    if importlib.util.find_spec("ray") is not None:
        holder = LazyEngine("ray", preset, local_cpus=4)  # Own engine: a Ray job per call
        try:
            judged("ray", holder.get())
        finally:
            holder.close()
    reference = by_route["vllm"]
    print(f"\n{model}: p_yes by route (* where the key was written as in process)")
    for route, results in by_route.items():
        same = [paths[route].get(r.prompt) == paths["vllm"].get(r.prompt) for r in asked]
        values = " ".join(f"{r.p_yes:.4f}{'*' if s else ' '}" for r, s in zip(results, same))
        print(f"  {route:13} {values}")
    for route, results in by_route.items():
        compared = 0
        for req, ref, got in zip(asked, reference, results):
            assert got.ok and got.p_yes is not None, (route, got)
            assert got.prompt_digest == ref.prompt_digest, (route, got)  # the same prompt ids
            if paths[route].get(req.prompt) == paths["vllm"][req.prompt]:
                gap = abs(log_odds(got.p_yes) - log_odds(ref.p_yes))
                assert gap <= ACROSS_ROUTES_LOG_ODDS, (route, gap, ref, got)
                compared += 1
        assert compared >= len(asked) // 2, (route, compared)  # most keys written alike
