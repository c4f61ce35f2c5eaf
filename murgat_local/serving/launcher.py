"""The `vllm serve` command line for a preset: its engine arguments, plus what a judge needs.

The server gets exactly the engine arguments the in-process engine runs with
(`engines.identity.effective_args`: on the CPU wheel that includes chunked prefill off, since
concurrent seeded requests crash it), so a served judge has the in-process judge's identity and
a run can move between the two. On top: whitespace-free structured output with xgrammar (the
per-request flag is ignored by vLLM), vLLM's default sampling instead of the model folder's
generation_config (the in-process engine uses vLLM's defaults too), and the preset's name as
the served model name.
"""

from __future__ import annotations

import json
import os
import sys

from ..engines.identity import effective_args, vllm_cpu_build
from ..engines.presets import Preset
from ..engines.vllm import ENGINE_KEYS
from ..offline import LOCAL_DEFAULTS, OFFLINE_ENV

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


def serve_argv(preset: Preset, *, host: str = "127.0.0.1", port: int = 8000, overrides: dict | None = None,
               extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The arguments after `vllm`: `serve MODEL_DIR --flag value ...`."""
    args = effective_args("vllm", preset, dict(overrides or {}))
    unknown = set(args) - ENGINE_KEYS
    if unknown:
        raise ValueError(f"preset {preset.name}: unknown engine arguments {sorted(unknown)}")
    argv = ["serve", str(preset.require_path()), "--host", host, "--port", str(int(port)),
            "--served-model-name", preset.name, "--generation-config", "vllm",
            "--structured-outputs-config.backend", "xgrammar",
            "--structured-outputs-config.disable_any_whitespace", "true",
            # The frame rate of each video travels per request (a cut range may be sampled
            # slower than --fps); these keyword arguments come from the scorer, never from
            # the text under evaluation.
            "--trust-request-mm-kwargs"]
    if preset.trust_remote_code:
        argv.append("--trust-remote-code")
    for key in sorted(args):
        argv += _flag(key, args[key])
    return argv + list(extra)


def serve_env(base: dict | None = None, *, device: str | None = None) -> dict:
    """The server's environment: offline, loopback by default, and on a GPU box the one device
    it may use (`device`, for one process per GPU)."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    for key, value in LOCAL_DEFAULTS.items():
        env.setdefault(key, value)
    if vllm_cpu_build():
        env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


def serve_command(preset: Preset, **kwargs) -> list[str]:
    """The whole command: vLLM's CLI through `serving.entry`, which also runs on the CPU wheel."""
    return [sys.executable, "-m", "murgat_local.serving.entry", *serve_argv(preset, **kwargs)]
