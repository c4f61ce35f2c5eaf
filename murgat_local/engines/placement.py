"""Where a preset starts: its layout for the GPUs a route's vLLM will see, chosen before anything
starts (and before the identity is computed, since the layout's arguments change numerics), or a
refusal quoting the `murgat models --fit` line where those GPUs cannot hold it.

Every route that starts vLLM here takes the same decision: the in-process engine, `--data-parallel`
replicas (each replica on its share of the GPUs), a local Ray (the driver's GPUs: a remote
cluster's workers are not seen from here, so the preset starts there as written), and the
`vllm serve` that `murgat serve` launches. A served model (`--engine openai`) runs wherever its
server was started, with that launcher's layout.
"""

from __future__ import annotations

import dataclasses

from .presets import Preset

# Engines that start vLLM on this machine's (or, for Ray, the driver's) GPUs.
STARTS_VLLM = frozenset({"vllm", "replicas", "ray"})


@dataclasses.dataclass(frozen=True)
class Gpus:
    """The GPUs a route's vLLM sees: the memory of one (GiB, as torch reports it) and how many."""

    memory_gib: float
    count: int


class DoesNotFit(ValueError):
    """The GPUs seen cannot hold the preset: the message ends with the `--fit` line."""


def seen(kind: str, options: dict | None = None) -> Gpus | None:
    """The GPUs an engine of `kind` started here would lay its model out on; None on the CPU
    build, without CUDA, for a route that starts no vLLM here, and for a Ray cluster named by
    address. A replica of `--data-parallel N` sees its share of them."""
    from .identity import vllm_cpu_build

    options = options or {}
    if kind not in STARTS_VLLM or vllm_cpu_build():
        return None
    if kind == "ray" and options.get("address"):
        return None
    from .fit import seen_gpus

    found = seen_gpus()
    if found is None:
        return None
    memory, count = found
    if kind == "replicas":
        count = max(1, count // max(1, int(options.get("data_parallel") or 1)))
    return Gpus(memory, count)


def lay_out(preset: Preset, gpus: Gpus | None, options: dict | None = None) -> Preset:
    """`preset` with the layout it holds for `gpus` (`Preset.on_gpus`), or `DoesNotFit` with the
    `--fit` line where those GPUs cannot hold it under `options` (the run's engine arguments,
    which the engine starts with); unchanged where no GPUs are seen."""
    if gpus is None:
        return preset
    from .fit import fit_preset, gpu_for_memory, refusal
    from .presets import all_presets

    name = f"{gpus.memory_gib:.1f} GiB GPU"
    fit = fit_preset(
        preset, name, gpu_for_memory(gpus.memory_gib), gpus.count, options, all_presets
    )
    why = refusal(True, fit)
    if why:
        raise DoesNotFit(f"{preset.name} cannot start on this box's GPUs: {why}")
    return preset.on_gpus(gpus.memory_gib, gpus.count)
