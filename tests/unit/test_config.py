import pathlib

import pytest

from murgat_local.config import load_config, load_generate_config
from murgat_local.config_errors import ConfigError

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


def _lines(e: pytest.ExceptionInfo[ConfigError]) -> list[str]:
    return [p.line({"sampling.temperature": "--temperature"}) for p in e.value.problems]


def test_bad_config_is_refused_naming_the_file_the_key_the_range_and_the_value(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("judge = 'x'\n[media]\nfps = -1\n")
    with pytest.raises(ConfigError) as e:
        load_config(bad, {})
    assert _lines(e) == [f"{bad}: key media.fps: must be > 0 and <= 30, got -1"]
    bad.write_text("jugde = 'typo'\n")
    with pytest.raises(ConfigError) as e:
        load_config(bad, {})
    assert _lines(e) == [f"{bad}: key jugde: unknown key, got 'typo'"]


def test_a_flag_is_named_as_the_flag_and_a_generate_key_under_its_table(tmp_path):
    """An override (a flag) is the flag's fault even where the file sets the key too; a key of
    `[generate]` is named under it, one of the shared top level as it is."""
    toml = tmp_path / "run.toml"
    toml.write_text("limit = -1\n[generate]\nsamples = 0\n[generate.sampling]\ntop_p = 0.5\n")
    with pytest.raises(ConfigError) as e:
        load_generate_config(toml, {"models": ["m"], "sampling": {"temperature": 99}})
    assert sorted(_lines(e)) == sorted(
        [
            f"{toml}: key limit: must be >= 1, got -1",
            f"{toml}: key generate.samples: must be >= 1 and <= 64, got 0",
            "--temperature (key sampling.temperature): must be >= 0 and <= 2, got 99",
        ]
    )


def test_one_value_of_a_repeated_flag_is_named_as_that_flag():
    with pytest.raises(ConfigError) as e:
        load_generate_config(None, {"models": ["a", 5]})
    assert [p.line({"models": "--model"}) for p in e.value.problems] == [
        "--model (key models.1): input should be a valid string, got 5"
    ]
