"""The openai engine's configuration and identity, and what `murgat serve` refuses before anything starts: loopback addresses, flags that would undo a guarantee, media inline only."""

from __future__ import annotations

import dataclasses

import pytest
from support.paths import require_model

from murgat_local.config import RunConfig, load_config
from murgat_local.engines import load_preset


def test_config_checks_engines_and_servers(tmp_path):
    with pytest.raises(ValueError, match="did you mean 'openai'"):
        RunConfig(engine="opnai")
    with pytest.raises(ValueError, match="needs a server"):
        RunConfig(engine="openai")
    with pytest.raises(ValueError, match="unknown stage"):
        RunConfig(stage_engines={"entailment": {"engine": "openai", "base_url": "http://h:1/v1"}})
    with pytest.raises(ValueError, match="does not apply to engine 'transformers'"):
        RunConfig(engine="transformers", data_parallel=2)
    with pytest.raises(ValueError, match="must start with http"):
        RunConfig(engine="openai", server={"base_url": "h:1/v1"})
    cfg_file = tmp_path / "run.toml"
    cfg_file.write_text(
        '[server]\nbase_url = "http://a:1/v1"\nmax_concurrency = 8\n'
        '[stage_engines.entail]\nengine = "openai"\nbase_url = "http://b:2/v1"\n'
    )
    cfg = load_config(cfg_file, {"server": {"max_concurrency": 16, "base_url": None}})
    assert cfg.engine_for("entail") == (
        "openai",
        {
            "base_url": "http://b:2/v1",
            "max_concurrency": 16,
            "timeout_s": 600.0,
            "retries": 2,
            "retry_for_s": 300.0,
        },
    )
    assert cfg.engine_for("verifiable") == ("vllm", {})
    assert RunConfig(data_parallel=2).engine_for(None) == ("replicas", {"data_parallel": 2})


def test_a_served_judges_identity_is_the_weights_or_the_stated_fingerprint(tmp_path):
    import dataclasses

    from murgat_local.engines import LazyEngine
    from murgat_local.engines.identity import FingerprintMismatch, weights_fingerprint

    require_model("smollm2-135m-instruct")
    preset = load_preset("smollm2-135m-instruct")
    url = "http://127.0.0.1:9/v1"  # identities are known without contacting anything
    local = LazyEngine("vllm", preset)
    assert LazyEngine("openai", preset, base_url=url).identity == local.identity
    digest = weights_fingerprint(preset.path.resolve())
    assert LazyEngine("openai", preset, base_url=url, fingerprint=digest).identity == local.identity
    with pytest.raises(FingerprintMismatch):
        LazyEngine("openai", preset, base_url=url, fingerprint="0" * 32)
    # Weights elsewhere (only the server reads them): the stated fingerprint stands for them, and
    # the served model's tokenizer folder gives the special tokens the in-process engine breaks.
    remote = dataclasses.replace(preset, path=tmp_path / "not-here")
    assert (
        LazyEngine(
            "openai", remote, base_url=url, fingerprint=digest, tokenizer=preset.path
        ).identity
        == local.identity
    )
    assert (
        LazyEngine(
            "openai", remote, base_url=url, fingerprint="f" * 32, tokenizer=preset.path
        ).identity
        != local.identity
    )
    # Without it only generic shapes are broken: another prompt for some texts, another identity.
    generic = LazyEngine("openai", remote, base_url=url, fingerprint=digest)
    assert (
        generic.identity != local.identity
        and generic.identity_detail["neutralization"] == "generic"
    )
    from murgat_local.engines import ModelNotFound

    with pytest.raises(ModelNotFound):
        LazyEngine("openai", remote, base_url=url)


# Special tokens of the tokenizer folder that no generic shape covers (Gemma's kinds, added here
# to SmolLM2's tokenizer) beside SmolLM2's own `<repo_name>`.


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("", False),
        ("192.168.1.20", False),
        ("10.0.0.1", False),
        ("fe80::1", False),
        ("gpu-box", False),
        ("localhost.example.com", False),
        ("127.0.0.1.nip.io", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host, loopback):
    from murgat_local.serving import is_loopback

    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    "extra",
    [
        ["--api-key", "k"],
        ["--api_key=k"],
        ["--api-ke", "k"],
        ["--host", "0.0.0.0"],
        ["--hos=0.0.0.0"],
        ["--allowed-media-domains", "example.com"],
        ["--allowed-local-media-path", "/"],
        ["--config", "x.yaml"],
    ],
)
def test_flags_that_would_undo_a_guarantee_are_not_passed_to_vllm(extra):
    from murgat_local.serving import ServeRefused, serve_argv

    require_model("smollm2-135m-instruct")
    with pytest.raises(ServeRefused, match="is not passed to vLLM"):
        serve_argv(load_preset("smollm2-135m-instruct"), extra=extra)


def test_the_server_is_told_to_take_media_inline_only():
    from murgat_local.serving import serve_env

    env = serve_env(
        {"VLLM_MEDIA_CONNECTOR": "http", "VLLM_USE_RUST_FRONTEND": "1", "VLLM_API_KEY": "k"}
    )
    assert (
        env["VLLM_MEDIA_CONNECTOR"] == "murgat-inline-only" and env["VLLM_USE_RUST_FRONTEND"] == "0"
    )
    assert env["VLLM_API_KEY"] == "k"  # passed through for vLLM to read


def test_a_preset_that_sizes_its_kv_cache_is_not_overridden_on_the_cpu_build(monkeypatch):
    """vLLM's CPU build lets VLLM_CPU_KVCACHE_SPACE override `kv_cache_memory_bytes`: the
    server's 2 GiB default is set only where neither the caller nor the server's command (the
    preset, a run's override, a flag passed through) sizes the cache."""
    from murgat_local.serving import launcher

    require_model("smollm2-135m-instruct")
    monkeypatch.setattr(launcher, "vllm_cpu_build", lambda: True)
    assert launcher.serve_env({})["VLLM_CPU_KVCACHE_SPACE"] == "2"
    preset = load_preset("smollm2-135m-instruct")  # a test preset: 256 MiB
    sized = launcher.serve_env({}, command=launcher.serve_command(preset))
    assert "VLLM_CPU_KVCACHE_SPACE" not in sized
    bare = dataclasses.replace(
        preset,
        engine_args={k: v for k, v in preset.engine_args.items() if k != "kv_cache_memory_bytes"},
    )
    assert launcher.serve_env({}, command=launcher.serve_command(bare))["VLLM_CPU_KVCACHE_SPACE"]
    for spelled in (["--kv_cache_memory_bytes=1"], ["--kv-cache-mem", "1"]):
        command = launcher.serve_command(bare, extra=tuple(spelled))
        assert "VLLM_CPU_KVCACHE_SPACE" not in launcher.serve_env({}, command=command), spelled
    dtype = launcher.serve_command(bare, extra=("--kv-cache-dtype", "fp8"))
    assert launcher.serve_env({}, command=dtype)["VLLM_CPU_KVCACHE_SPACE"] == "2"
    assert launcher.serve_env({"VLLM_CPU_KVCACHE_SPACE": "3"})["VLLM_CPU_KVCACHE_SPACE"] == "3"
    monkeypatch.setattr(launcher, "vllm_cpu_build", lambda: False)
    assert "VLLM_CPU_KVCACHE_SPACE" not in launcher.serve_env({})
