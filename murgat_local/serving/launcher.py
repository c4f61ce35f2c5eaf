"""The `vllm serve` command line for a preset: its engine arguments, plus what a judge needs.

The server gets exactly the engine arguments the in-process engine runs with
(`engines.identity.effective_args`: on the CPU wheel that includes chunked prefill off, since
concurrent seeded requests crash it), so a served judge has the in-process judge's identity and
a run can move between the two. On top: whitespace-free structured output with xgrammar (the
per-request flag is ignored by vLLM), vLLM's default sampling instead of the model folder's
generation_config (the in-process engine uses vLLM's defaults too), and the preset's name as
the served model name.

What a server exposes is decided here too, so every starter (`murgat serve`, `--data-parallel`,
the tests) gets the same rules: off loopback it needs an API key, read from `VLLM_API_KEY` by
vLLM and by the project's guard (`serving.guard`, which asks for it on every route but /health
and /ping; vLLM's own check covers /v1 only), never from the command line, which `ps` shows to
every user; and it takes media inline only (`serving.connector`): a URL a client names is never
fetched.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from collections.abc import Sequence

from ..engines.identity import effective_args, vllm_cpu_build
from ..engines.presets import Preset
from ..engines.vllm import ENGINE_KEYS
from ..offline import LOCAL_DEFAULTS, OFFLINE_ENV

# vLLM (vllm.envs) and the guard (serving.guard) read the key from this variable, so it stays out of argv.
API_KEY_VAR = "VLLM_API_KEY"
# The media connector (`serving.connector`) that takes inline data only.
MEDIA_CONNECTOR = "murgat-inline-only"
# The middleware (`serving.guard`) that asks for the key on every route, not only vLLM's /v1.
GUARD = f"{__package__}.guard.APIKeyGuard"

# `vllm serve` flags a caller may not add: they would undo what the launcher guarantees.
_REFUSED_FLAGS = {
    "--host": "give it as `murgat serve --host`, which checks that off loopback there is an API key",
    "--api-key": f"put the key in the environment variable {API_KEY_VAR}: a command line is visible "
    f"to every user of the machine (ps) and `--print` shows it",
    "--allowed-local-media-path": "the server takes media inline only; it reads no file a client names",
    "--allowed-media-domains": "the server takes media inline only; it fetches no URL a client names",
    "--config": "a vLLM config file could set --host or --api-key; give vLLM flags on the command line",
}


class ServeRefused(ValueError):
    """A server that would be exposed without a key, or a flag that would undo a guarantee."""


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only: `localhost`, 127.0.0.0/8 or ::1
    (also IPv4-mapped). Anything else, 0.0.0.0, :: and every other name included, is not."""
    host = host.strip().strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: it may resolve to any interface
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def check_exposure(host: str, env: dict | None = None) -> None:
    """Refuse a server reachable from other machines without an API key (in `VLLM_API_KEY`)."""
    key = (os.environ if env is None else env).get(API_KEY_VAR) or ""
    if not is_loopback(host) and not key.strip():
        raise ServeRefused(
            f"--host {host or '(all interfaces)'} serves other machines, and {API_KEY_VAR} is not set: "
            f"anyone who reaches the port could use the judge. Set {API_KEY_VAR} in the environment "
            f"(vLLM reads it; scorers pass --api-key-env {API_KEY_VAR}), or serve on 127.0.0.1"
        )


def option_named(arg: str) -> str | None:
    """The option vLLM's parser takes `arg` to name (before argparse expands an abbreviation),
    or None for a value or a short option. vLLM rewrites a dotted flag into JSON for the flag
    before the dot (`--api-key.x SECRET` and `--api-key.x=SECRET` are `--api-key '{"x":
    "SECRET"}'`, `--host.x+ a,b` a list), and reads underscores as dashes up to that dot."""
    if not arg.startswith("--") or arg == "--":
        return None
    name = arg.split("=", 1)[0].split(".", 1)[0]
    return "--" + name[2:].replace("_", "-")


# vLLM's flag for a KV cache of a fixed size, which VLLM_CPU_KVCACHE_SPACE overrides on the CPU build.
KV_FLAG = "--kv-cache-memory-bytes"


def _names_kv_cache_size(arg: str) -> bool:
    """Whether vLLM's parser reads `arg` as --kv-cache-memory-bytes (spelled with underscores, with
    `=`, or abbreviated past --kv-cache-m, where it stops being --kv-cache-dtype's prefix too)."""
    name = option_named(arg)
    return name is not None and name.startswith("--kv-cache-m") and KV_FLAG.startswith(name)


def check_extra(extra: list[str] | tuple[str, ...]) -> None:
    """Refuse those flags however vLLM's parser would read them: dotted, with `=`, with
    underscores, and abbreviated (vLLM's parser keeps argparse's allow_abbrev: `--hos` is
    `--host`). Every argument is checked, values and those after `--` too: vLLM rewrites dotted
    flags wherever they stand. The refusal names the flag, never what follows it."""
    for arg in extra:
        name = option_named(arg)
        if name is None:
            continue
        for refused, why in _REFUSED_FLAGS.items():
            if refused.startswith(name):
                spelled = arg.split("=", 1)[0].split(".", 1)[0]
                named = spelled if spelled == refused else f"{spelled} ({refused})"
                raise ServeRefused(f"{named} is not passed to vLLM: {why}")


# Engine arguments that are not `vllm serve` flags of the same name.
_RENAMED = {"reasoning_parser": "--structured-outputs-config.reasoning_parser"}


def _flag(key: str, value) -> list[str]:
    flag = _RENAMED.get(key, "--" + key.replace("_", "-"))
    if isinstance(value, bool):
        if flag.startswith("--structured"):
            return [flag, str(value).lower()]
        return [flag] if value else ["--no-" + flag[2:]]
    if isinstance(value, (dict, list)):
        return [flag, json.dumps(value, separators=(",", ":"))]
    return [flag, str(value)]


def serve_argv(
    preset: Preset,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    overrides: dict | None = None,
    extra: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """The arguments after `vllm`: `serve MODEL_DIR --flag value ...`. A flag in `extra` that
    would undo a guarantee (see `_REFUSED_FLAGS`) raises `ServeRefused`."""
    check_extra(extra)
    args = effective_args("vllm", preset, dict(overrides or {}))
    unknown = set(args) - ENGINE_KEYS
    if unknown:
        raise ValueError(f"preset {preset.name}: unknown engine arguments {sorted(unknown)}")
    argv = [
        "serve",
        str(preset.require_path()),
        "--host",
        host,
        "--port",
        str(int(port)),
        "--served-model-name",
        preset.name,
        "--generation-config",
        "vllm",
        "--structured-outputs-config.backend",
        "xgrammar",
        "--structured-outputs-config.disable_any_whitespace",
        "true",
        # The frame rate of each video travels per request (a cut range may be sampled
        # slower than --fps); these keyword arguments come from the scorer, never from
        # the text under evaluation. Safe only because every client holding the key (or,
        # without one, every process on this machine) is trusted: see docs/security.md, "The judge server".
        "--trust-request-mm-kwargs",
        # vLLM's own key check covers /v1 and a few prefixes only: see serving.guard.
        "--middleware",
        GUARD,
    ]
    if preset.trust_remote_code:
        argv.append("--trust-remote-code")
    for key in sorted(args):
        argv += _flag(key, args[key])
    return argv + list(extra)


def serve_env(
    base: dict | None = None, *, device: str | None = None, command: Sequence[str] = ()
) -> dict:
    """The server's environment: offline, loopback by default, media inline only, and on a GPU
    box the one device it may use (`device`, for one process per GPU). `VLLM_API_KEY` passes
    through from `base` (the caller's environment) untouched. On vLLM's CPU build the KV cache
    is 2 GiB unless the caller's environment or the server's `command` size it (a preset's
    `kv_cache_memory_bytes`, a run's override or a flag passed through: vLLM lets
    VLLM_CPU_KVCACHE_SPACE override that flag, so the variable is not set over it)."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    env["VLLM_MEDIA_CONNECTOR"] = MEDIA_CONNECTOR
    # That connector runs in vLLM's Python front end; the optional Rust one (a separate vllm-rs
    # binary) would take requests without it.
    env["VLLM_USE_RUST_FRONTEND"] = "0"
    for key, value in LOCAL_DEFAULTS.items():
        env.setdefault(key, value)
    if vllm_cpu_build():
        env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        if not any(_names_kv_cache_size(arg) for arg in command):
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


def serve_command(preset: Preset, **kwargs) -> list[str]:
    """The whole command: vLLM's CLI through `serving.entry`, which also runs on the CPU wheel."""
    return [sys.executable, "-m", "murgat_local.serving.entry", *serve_argv(preset, **kwargs)]
