"""One prompt, every route: for the same request, in-process vLLM, `vllm serve` through the
OpenAI engine, Ray Data LLM and transformers put the same prompt token ids before the model
(the sha256 each engine's `Result.prompt_digest` carries), with one BOS where the template
writes one.

The routes come from the session's ledger (`conftest.prompt_ledger`), which the engine tests
that already hold them fill (tests/test_engine_*.py, test_families_e2e.py, test_reach_serve_e2e.py,
test_serve_e2e.py, test_engine_contract.py: this module's name sorts after theirs); a route no
earlier test held is started here, one engine at a time, the Ray routes on one local Ray.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from support.paths import require_model
from support.route_checks import ROUTES, differences, record_route

from murgat_local.engines import load_preset, make_engine
from murgat_local.engines.identity import vllm_cpu_build
from murgat_local.judges.smoke import LOCAL_TEST_MODELS

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.memory_heavy("a local Ray all module long, and each model's Ray replica"),
]

# Tokenizers whose BOS is the chat template's turn opener (SmolLM2's <|im_start|>): one per turn.
BOS_OPENS_TURNS = {"smollm2-135m-instruct"}


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for every model's Ray route (each engine leaves a Ray it did not start)."""
    ray = pytest.importorskip("ray")
    from murgat_local.engines.ray import _worker_env

    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=4,
            include_dashboard=False,
            runtime_env={"env_vars": _worker_env()},
            log_to_driver=False,
        )
    yield
    if started:
        ray.shutdown()


@contextlib.contextmanager
def started(route: str, name: str, log_dir):
    """An engine of `route` on `name`, closed (and its server stopped) on leaving."""
    preset = load_preset(name)
    # A route whose vLLM runs elsewhere is sent only what this machine's build can run (vLLM's
    # CPU build crashes in some towers: the in-process engine refuses those itself).
    runs = preset.on_runtime(cpu=vllm_cpu_build())
    with contextlib.ExitStack() as stack:
        if route == "openai":
            from murgat_local.engines.openai import OpenAIEngine
            from murgat_local.serving import ServerProcess

            env = dict(os.environ)
            server = stack.enter_context(
                ServerProcess(preset, log=log_dir / "vllm-serve.log", env=env)
            )
            eng = OpenAIEngine(runs, base_url=server.base_url)
        elif route == "ray":
            eng = make_engine("ray", runs)
        else:
            eng = make_engine(route, preset)
        stack.callback(eng.close)
        yield eng


@pytest.mark.parametrize("name", LOCAL_TEST_MODELS)
def test_every_route_puts_the_same_prompt_before_the_model(name, prompt_ledger, request, tmp_path):
    require_model(name)
    preset = load_preset(name)
    routes = prompt_ledger.setdefault(name, {})
    for route in ROUTES:
        if route in routes:
            continue
        if route == "ray":
            request.getfixturevalue("local_ray")
        with started(route, name, tmp_path) as eng:
            record_route(prompt_ledger, route, preset, eng)
    ran = {r: routes[r] for r in ROUTES}
    assert not differences(ran), f"{name}: the routes' prompts differ\n" + "\n".join(
        differences(ran)
    )
    for route, seen in ran.items():  # the text probe runs everywhere: nothing compared vacuously
        assert seen["text"][0] is not None, (name, route, seen)
    # The BOS the chat template writes and no other on every route: one (Gemma), or one per turn.
    from murgat_local.engines.base import build_messages
    from murgat_local.engines.render import ChatRenderer
    from murgat_local.judges.smoke import probe_requests

    renderer = ChatRenderer(preset.require_path(), preset)
    bos = renderer.tokenizer.bos_token_id
    if bos is not None:
        (text_probe,) = [r for m, r in probe_requests(frozenset({"text"}))]
        written = renderer.prompt_ids(build_messages(text_probe, preset.quirks)[0]).count(bos)
        assert written == 1 or name in BOS_OPENS_TURNS, (name, written)
        counts = {(r, m): s[1] for r, seen in ran.items() for m, s in seen.items() if s[0]}
        assert set(counts.values()) == {written}, (name, written, counts)
