"""vLLM in-process engine x every local test model (real engine, no mocks).

One engine alive at a time (module-scoped, parametrized fixture): a cold vLLM start costs
25-40 s here, so each model's engine is started once and serves all its checks.
"""

import pytest

from murgat_local.judges import JudgeRequest, ModelNotFound, YesNo, load_preset, make_engine
from engine_checks import MODELS, _check_every_modality, _check_structured_types, _engine

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module", params=MODELS)
def vllm_engine(request):
    preset, eng = _engine("vllm", request.param)
    yield preset, eng
    eng.close()


def test_vllm_every_modality(vllm_engine):
    _check_every_modality(*vllm_engine)


def test_vllm_several_field_verdicts(vllm_engine):
    _check_structured_types(vllm_engine[1])


def test_vllm_batch_of_many_all_parse(vllm_engine):
    preset, eng = vllm_engine
    reqs = [JudgeRequest(f"Claim {i}: the ball is red.", YesNo, "Answer YES or NO.") for i in range(48)]
    results = eng.judge(reqs)
    assert all(r.ok for r in results)


def test_a_started_engine_has_the_identity_known_before_it_started(vllm_engine):
    from murgat_local.judges import LazyEngine

    preset, eng = vllm_engine
    assert eng.identity == LazyEngine("vllm", preset).identity


def test_missing_model_directory_names_it_and_the_preset(tmp_path):
    preset = load_preset("tiny-qwen3-omni", path_override=tmp_path / "nowhere")
    for kind in ("vllm", "transformers"):
        with pytest.raises(ModelNotFound, match="nowhere.*tiny-qwen3-omni"):
            make_engine(kind, preset)
