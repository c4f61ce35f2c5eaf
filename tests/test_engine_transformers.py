"""transformers engine x every local test model (real engine, no mocks)."""

import pytest

from engine_checks import MODELS, _check_every_modality, _check_structured_types, _engine

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module", params=MODELS)
def hf(request):
    preset, eng = _engine("transformers", request.param)
    yield preset, eng
    eng.close()


def test_transformers_every_modality(hf):
    _check_every_modality(*hf)


def test_transformers_several_field_verdicts(hf):
    _check_structured_types(hf[1])
