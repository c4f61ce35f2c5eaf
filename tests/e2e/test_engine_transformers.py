"""transformers engine x every local test model (real engine, no mocks)."""

import pytest
from support.engine_checks import (
    FAMILIES,
    MODELS,
    _check_every_modality,
    _check_structured_types,
)
from support.route_checks import record_route

from murgat_local.engines import load_preset

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module", params=MODELS + FAMILIES)
def hf(request, engine_pool):
    return load_preset(request.param), engine_pool.get(request.param, "transformers")


def test_transformers_every_modality(hf):
    _check_every_modality(*hf)


def test_transformers_prompts_are_recorded_for_the_cross_route_check(hf, prompt_ledger):
    """What this route ran for the smoke probes (compared in test_serve_prompt_routes.py)."""
    preset, eng = hf
    seen = record_route(prompt_ledger, "transformers", preset, eng)
    assert all(digest is not None for digest, _, _ in seen.values()), seen


def test_transformers_several_field_verdicts(hf):
    _check_structured_types(hf[1])


def test_score_with_the_transformers_engine(tmp_path, media_root):
    """The CPU fallback drives every stage of the protocol, media included."""
    import json

    from murgat_local.config import RunConfig
    from murgat_local.metrics.run_summary import RunSummary
    from murgat_local.pipeline.runner import Runner

    rows = [
        {
            "id": "a",
            "video": "colors",
            "model_generation": "The screen is red (visual, 0:00). A tone plays (audio, 0:01-0:02). The screen turns green "
            "(visual, 0:01-0:02; audio, 0:01). Therefore A.\nAnswer: A",
            "answer": "A",
        }
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = RunConfig(
        judge="tiny-qwen3-omni",
        verifier="smollm2-135m-instruct",
        decomposer="smollm2-135m-instruct",
        engine="transformers",
        decontextualize=False,
    )
    runner = Runner(cfg, media_root, tmp_path / "out", summary=RunSummary)
    try:
        result = runner.run(path)
    finally:
        runner.close()
    (rec,) = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    assert rec["status"] == "ok" and rec["correct"] is True
    stages = result.summary.stages
    assert stages["verifiable"].model_calls == 4
    if rec["counts"]["cited_verifiable"]:
        assert stages["decompose"].model_calls > 0 and stages["entail"].model_calls > 0
        assert stages["entail"].errors == 0  # Qwen3-Omni takes images, video and audio
    assert sum(result.summary.unparsed_verdicts.values()) == 0


def test_a_started_transformers_engine_has_the_identity_known_before_it_started(hf):
    from murgat_local.judges import LazyEngine

    preset, eng = hf
    assert eng.identity == LazyEngine("transformers", preset).identity
