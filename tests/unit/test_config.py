import pathlib

import pytest
from pydantic import ValidationError

from murgat_local.config import load_config

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "samples" / "run.toml"


def test_sample_config_and_flag_precedence():
    cfg = load_config(SAMPLE, {"entailer": "tiny-gemma3", "compat": "reference", "judge": None})
    models = cfg.stage_models()
    assert models == {
        "decontext": "smollm2-135m-instruct",
        "verifiable": "smollm2-135m-instruct",
        "decompose": "smollm2-135m-instruct",
        "entail": "tiny-gemma3",
    }
    assert (
        cfg.compat == "reference"
        and cfg.media.fps == 2.0
        and cfg.engine_args == {"max_num_seqs": 64}
    )


def test_bad_config_is_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("judge = 'x'\n[media]\nfps = -1\n")
    with pytest.raises(ValidationError):
        load_config(bad, {})
    bad.write_text("jugde = 'typo'\n")
    with pytest.raises(ValidationError):
        load_config(bad, {})
