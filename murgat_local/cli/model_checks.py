"""The work behind `murgat models`: listing reach, `--fit` and `--verify`, for `cli.tools`.

A command body stays short (parse, call the package, print; `tests/unit/test_cli_thin.py`), so
what `models` does with its options lives here: each preset's reach on this machine, the fit
lines with vLLM's output kept out of sight, and the folder checks with their progress. Apart
from `tools.py` because it registers no command: that module reads as its four commands.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import typer

import murgat_local.cli.ui as ui


def _reach_status(preset) -> dict:
    """What `murgat smoke --reach` found on this machine for each media modality of `preset`."""
    from ..judges.reach_probe import AUDIO_IN_VIDEO
    from ..judges.reach_record import reach_status

    media = [m for m in ("image", "video", "audio") if m in preset.modalities]
    if {"video", "audio"} <= preset.modalities:
        media.append(AUDIO_IN_VIDEO)
    return reach_status(preset.name, preset.path, media)


def _fit_models(
    names: list[str],
    gpu: str,
    gpus: int,
    gpu_mem: float | None,
    as_json: bool,
    kv_cache_bytes: int | None = None,
    max_model_len: int | None = None,
) -> None:
    """`murgat models --fit`: one line (or JSON object) per preset or named model folder; exit 0
    whether or not they fit. With `kv_cache_bytes`: each model's KV token capacity instead."""
    from ..engines.fit import GPUS, fit_preset, gpu_for_memory
    from ..engines.presets import all_presets

    if kv_cache_bytes is not None or gpu == "cpu":
        _capacities(names, gpu, gpu_mem, as_json, kv_cache_bytes, max_model_len)
        return
    if max_model_len is not None:
        ui._fail("--max-model-len goes with --kv-cache-bytes")
    if gpu_mem is not None:
        kind, card = f"{gpu_mem:g} GiB", gpu_for_memory(gpu_mem)
    elif gpu in GPUS:
        kind, card = gpu, GPUS[gpu]
    else:
        ui._fail(f"--gpu takes {', '.join(GPUS)}, not {gpu!r} (or give --gpu-mem GIB)")
    presets = _presets(names)
    fits = _quietly(
        lambda: [
            f
            for f in (fit_preset(p, kind, card, gpus, variants=all_presets) for p in presets)
            if f is not None
        ]
    )
    _print_rows(fits, as_json)


def _capacities(
    names: list[str],
    gpu: str,
    gpu_mem: float | None,
    as_json: bool,
    kv_cache_bytes: int | None,
    max_model_len: int | None,
) -> None:
    """`murgat models --fit --kv-cache-bytes B`: the tokens such a cache holds per model."""
    from ..engines.fit import GPUS, gpu_for_memory
    from ..engines.fit_capacity import capacity

    if kv_cache_bytes is None:
        ui._fail(
            "--gpu cpu goes with --kv-cache-bytes (the CPU build's cache is given, not shared)"
        )
    if gpu != "cpu" and gpu not in GPUS and gpu_mem is None:
        ui._fail(f"--gpu takes {', '.join(GPUS)} or cpu, not {gpu!r} (or give --gpu-mem GIB)")
    card = gpu_for_memory(gpu_mem) if gpu_mem is not None else GPUS.get(gpu)
    presets = _presets(names)
    options = {"max_model_len": max_model_len} if max_model_len else {}
    device = "cpu" if gpu == "cpu" else "cuda"
    found = _quietly(
        lambda: [
            c
            for c in (capacity(p, kv_cache_bytes, device, card, options) for p in presets)
            if c is not None
        ]
    )
    _print_rows(found, as_json)


def _presets(names: list[str]) -> list:
    """The presets named, or every preset; an unknown or broken one is a usage error."""
    from ..engines import available_presets, load_preset

    try:
        return [load_preset(n) for n in names or available_presets()]
    except ValueError as e:
        ui._fail(str(e))


def _print_rows(rows: list, as_json: bool) -> None:
    """`--fit`'s rows: a JSON list on stdout, or one line each."""
    if as_json:
        sys.stdout.write(json.dumps([r.as_json() for r in rows], indent=2) + "\n")
        return
    for r in rows:
        ui.console.print(r.line(), markup=False, soft_wrap=True)


def _quietly(work):
    """`work()` with what vLLM prints while it builds its configs (for the sizing) sent to a log
    that is kept, and named, only when the work fails."""
    import tempfile

    from ..reports.logs import redirect_fds

    fd, name = tempfile.mkstemp(prefix="murgat-fit-", suffix=".log")
    os.close(fd)
    log = pathlib.Path(name)
    try:
        with redirect_fds(log):
            result = work()
    except BaseException:
        ui.err.print(f"vLLM's output while sizing: {log}", markup=False, soft_wrap=True)
        raise
    log.unlink(missing_ok=True)
    return result


def _verify_models(names: list[str], as_json: bool) -> None:
    """`murgat models --verify`: each folder's report. Without names, a preset whose folder is
    absent is listed, not checked; a name that is no folder is a usage error (exit 2)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TimeRemainingColumn

    from ..engines import ModelNotFound, available_presets, load_preset
    from ..engines.verify import verify_folder

    try:
        presets = [load_preset(n) for n in names or available_presets()]
    except (ModelNotFound, ValueError) as e:
        ui._fail(str(e))
    for n, p in zip(names, presets):
        if not p.path.is_dir():
            ui._fail(f"{n}: {p.path} is not a folder")
    rows, failed = [], 0
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=ui.err,
        transient=True,
    ) as progress:
        for p in presets:
            row: dict = {
                "name": p.name,
                "path": str(p.path),
                "present": (p.path / "config.json").is_file() or bool(names),
            }
            if row["present"]:
                task = progress.add_task(f"sha256 {p.name}", total=None)

                def on_total(n: int, task: TaskID = task) -> None:
                    progress.update(task, total=n)

                def on_bytes(n: int, task: TaskID = task) -> None:
                    progress.advance(task, n)

                report = verify_folder(p.path, p.modalities, on_total=on_total, on_bytes=on_bytes)
                progress.remove_task(task)
                row.update(report.as_json())
                failed += not report.whole
            else:
                row["whole"] = None
            rows.append(row)
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        for row in rows:
            if row["whole"] is None:
                ui.console.print(
                    f"{row['name']}: absent ({row['path']}), not checked",
                    markup=False,
                    soft_wrap=True,
                )
                continue
            checked = f"{row['headers']} safetensors headers read"
            if row["manifest"]:
                checked += f", sha256 of {row['hashed']} files matches {row['manifest']}"
            state = (
                f"whole ({row['path']}; {checked})"
                if row["whole"]
                else f"NOT WHOLE ({row['path']})"
            )
            ui.console.print(f"{row['name']}: {state}", markup=False, soft_wrap=True)
            for problem in row["problems"]:
                ui.console.print(
                    f"  {problem['path']}: {problem['reason']}", markup=False, soft_wrap=True
                )
    if failed:
        ui.err.print(f"[red]error:[/red] {failed} model folder(s) not whole", soft_wrap=True)
        raise typer.Exit(1)
