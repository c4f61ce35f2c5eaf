"""`murgat meta-eval --select` on a run folder from someone else: its paths, servers, keys and
engines never reach best.toml, only the settings that were measured, and a measured setting out
of range is refused naming the run (the runs: `select_runs` in tests/unit/conftest.py)."""

from __future__ import annotations

import copy
import json
import tomllib

from support.select_runs import _meta
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig, load_config

# What a run folder from someone else may hold: where to read from, which server and key to use,
# where engines and weights are. None of it may reach best.toml. The server named is a loopback
# address's port 9, so that a regression sends nothing off this machine either.
HOSTILE = {
    "allow_outside": ["/"],
    "models_dir": "/srv/theirs/models",
    "cache": "/srv/theirs/cache.sqlite",
    "engine": "openai",
    "data_parallel": 4,
    "ray": {"address": "ray://127.0.0.9:10001"},
    "server": {
        "base_url": "http://127.0.0.9:9/v1",
        "api_key_env": "THEIR_KEY_ENV",
        "served_model": "theirs",
    },
    "stage_engines": {
        "entail": {
            "engine": "openai",
            "base_url": "http://127.0.0.9:9/v1",
            "api_key_env": "THEIR_KEY_ENV",
        }
    },
    "engine_args": {"trust_remote_code": True, "download_dir": "/srv/theirs/dl"},
    "bootstrap_resamples": 10**9,
    "max_failed_calls": 1.0,
    "chunk_size": 1,
    "batch_size": 1,
    "number_tolerance": 1.0,
    "group_by": ["model"],
    "limit": 1,
    "unknown_setting": "x",
}

# What changes a verdict does come from the decomposer's run: it is what was measured.
MEASURED = {
    "sampling": {"temperature": 0.0, "seed": 7},
    "media": {
        "fps": 1.0,
        "max_frames": 16,
        "max_side": 224,
        "audio_point_window": 2.0,
        "duration_tolerance": 0.5,
    },
}


def _hostile_run(tmp, name, **media):
    import shutil

    folder = tmp / name
    shutil.copytree(tmp / "perfect", folder)
    summary = json.loads((folder / "summary.json").read_text())
    config = summary["provenance"]["config"]
    config.update(copy.deepcopy(HOSTILE))
    config["media"] = {
        **config["media"],
        **MEASURED["media"],
        "max_open_videos": 999,
        "max_segment_mb": 1e6,
    }
    config["sampling"] = {**config["sampling"], **MEASURED["sampling"], "top_p": 0.1}
    config["panel"] = {
        **config["panel"],
        "weights_from": "/etc/passwd",
        "engines": {"x": {"engine": "openai", "base_url": "http://127.0.0.9:9/v1"}},
    }
    config["media"].update(media)
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_a_run_folder_cannot_put_paths_servers_or_engines_into_best_toml(select_runs, media_root):
    tmp, truth, responses, judges = select_runs
    _hostile_run(tmp, "hostile")
    best = tmp / "hostile.toml"
    _meta(tmp, truth, ["hostile"], "--select", str(best))
    text = best.read_text()
    for trace in (
        "127.0.0.9",
        "THEIR_KEY_ENV",
        "/srv/theirs",
        "trust_remote_code",
        "/etc/passwd",
        "openai",
        "10000000",
        "unknown_setting",
        "max_open_videos",
        "top_p",
    ):
        assert trace not in text, trace
    written = tomllib.loads(text)
    # (compat is None, the default, which TOML leaves out)
    assert set(written) == {
        "judge",
        "verifier",
        "decomposer",
        "entailer",
        "decontextualize",
        "parse_reasoning",
        "sampling",
        "media",
    }
    assert written["media"] == MEASURED["media"] and written["sampling"] == MEASURED["sampling"]
    # Loaded as `murgat score --config` loads it: every location is the default, the measured
    # settings are applied.
    config = load_config(best, {})
    default = RunConfig()
    for key in (
        "allow_outside",
        "models_dir",
        "cache",
        "engine",
        "data_parallel",
        "ray",
        "server",
        "stage_engines",
        "engine_args",
        "bootstrap_resamples",
        "max_failed_calls",
        "chunk_size",
        "batch_size",
        "number_tolerance",
        "group_by",
        "limit",
    ):
        assert getattr(config, key) == getattr(default, key), key
    assert config.panel == default.panel
    assert config.media.max_open_videos == default.media.max_open_videos and config.media.fps == 1.0
    assert config.sampling.seed == 7
    # And `murgat score` plans it on this machine's engines, the measured judges per stage.
    res = CliRunner().invoke(
        app,
        [
            "score",
            str(responses),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp / "hostile-dry"),
            "--config",
            str(best),
            "--dry-run",
        ],
    )
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout[res.stdout.index("{") :])
    for stage in ("decontext", "verifiable", "decompose", "entail"):
        assert plan[stage]["model"] == judges["perfect"]


def test_a_measured_setting_out_of_range_is_refused_naming_the_run(select_runs):
    tmp, truth, *_ = select_runs
    _hostile_run(tmp, "hostile-fps", fps=1e9)
    best = tmp / "hostile-fps.toml"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(tmp / "hostile-fps"),
            "--human",
            str(truth),
            "--out",
            str(tmp / "meta-hostile-fps"),
            "--resamples",
            "0",
            "--select",
            str(best),
        ],
    )
    assert res.exit_code == 1, res.output
    assert "hostile-fps" in res.output and "fps" in res.output and not best.exists()
