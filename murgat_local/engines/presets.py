"""Model presets: data files under `models/`, validated once into a typed `Preset`.

A model is named either by preset (`tiny-qwen3-omni`) or by a local model directory. A preset's
`path` is resolved, in order, from: an explicit override, the environment variable the preset
names in `path_env`, an absolute `path`, or `path` under the models root (`--models-dir`,
`MURGAT_MODELS_DIR`, else the default below). Nothing here downloads anything.

The preset files ship inside the package (`murgat_local/presets`, a link to the repo's top-level
`models/` that the wheel turns into real files) and are found with `importlib.resources`, so a
checkout, an editable install and a regular wheel install read the same files.

The default models root is `<repo>/.local/models` when the package runs from a checkout (the
repo's `pyproject.toml` sits next to the package folder), otherwise the per-user data folder
`$XDG_DATA_HOME/murgat-local/models` (`~/.local/share/murgat-local/models`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import math
import os
import pathlib
import tomllib
from dataclasses import dataclass, field
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_serializer

_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def package_data(name: str) -> pathlib.Path:
    """The folder `name` shipped inside the package, as a real path."""
    found = resources.files("murgat_local") / name
    if isinstance(found, pathlib.Path):
        return found
    # An import from a zip: extract once, for the life of the process.
    return _extracted.enter_context(resources.as_file(found))


def _default_models_root(package_root: pathlib.Path) -> pathlib.Path:
    pyproject = package_root / "pyproject.toml"
    if pyproject.is_file() and 'name = "murgat-local"' in pyproject.read_text(encoding="utf-8"):
        return package_root / ".local" / "models"
    data_home = os.environ.get("XDG_DATA_HOME") or pathlib.Path.home() / ".local" / "share"
    return pathlib.Path(data_home) / "murgat-local" / "models"


# The folder that holds the package: the repo root in a checkout, site-packages otherwise.
PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[2]
PRESETS_DIR = package_data("presets")
DEFAULT_MODELS_ROOT = _default_models_root(PACKAGE_ROOT)

MODALITIES = ("text", "image", "video", "audio")

# vLLM's default share, and the most any engine is given: a model that needs more does not fit.
MAX_MEMORY_SHARE = 0.92


class ModelNotFound(FileNotFoundError):
    """The model directory a preset points to does not exist."""


class JudgeSampling(BaseModel):
    """A preset's own decoding for judge calls (`[quirks.sampling]`), where its model card
    recommends sampling over greedy decoding (a thinking model decoded greedily tends to repeat
    itself until its budget runs out). Absent: judges decode greedily. Part of the identity
    through the quirks; a fixed seed per request keeps a verdict reproducible."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    temperature: float = Field(ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = Field(0, ge=0)  # 0: no top-k cut
    seed: int = 0


class Quirks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    media_first: bool = True
    video_as_images: bool = False
    thinking: bool = False
    extra_output_tokens: int = 0
    system_role: bool = True
    # The longest audio clip the model hears whole (its processor cuts the rest off silently):
    # a longer one is sent as consecutive windows of at most this length.
    max_audio_seconds: float | None = None
    # Judge decoding from the model card (`JudgeSampling`); None: greedy at the engine's
    # temperature.
    sampling: JudgeSampling | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler):
        # Quirks are part of an engine's identity: a quirk added later appears only where a
        # preset sets it, so the presets that do not keep their identity and cached verdicts.
        data = handler(self)
        for name in _LATER_QUIRKS:
            if data.get(name) == Quirks.model_fields[name].default:
                data.pop(name, None)
        return data


_LATER_QUIRKS = ("max_audio_seconds", "sampling")


class LayoutData(BaseModel):
    """The layout a preset needs on one GPU kind (`[fit.layouts.<kind>]`)."""

    model_config = ConfigDict(extra="forbid")
    gpus: int = Field(1, ge=1)
    tensor_parallel_size: int = Field(1, ge=1)
    max_num_batched_tokens: int | None = None
    max_model_len: int | None = None


class FitData(BaseModel):
    """What `murgat models --fit` sizes a model from where its weights are absent: the bytes
    of the weights vLLM loads and the text model's config.json fields, and the layouts the
    preset needs per GPU kind."""

    model_config = ConfigDict(extra="forbid")
    weights_bytes: int | None = None
    config: dict = Field(default_factory=dict)
    layouts: dict[str, LayoutData] = Field(default_factory=dict)


class DownloadData(BaseModel):
    """Where a preset's weights come from: a model hub repository and its revision (a commit,
    tag or branch), for the command printed where the preset's folder is missing."""

    model_config = ConfigDict(extra="forbid")
    repo: str
    revision: str = "main"


class PresetFile(BaseModel):
    """The schema of one `models/*.toml` file."""

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    path: str
    path_env: str | None = None
    architecture: str
    modalities: list[str] = Field(default_factory=lambda: ["text"])
    trust_remote_code: bool = False
    local_test: bool = False
    engine: dict = Field(default_factory=dict)
    quirks: Quirks = Field(default_factory=Quirks)
    # Modalities vLLM's CPU build cannot run for this family, each with the reason: refused
    # there, with that reason, instead of taking the engine down.
    cpu_refuses: dict[str, str] = Field(default_factory=dict)
    # The dtype on vLLM's CPU build, where it must not follow the CPU (`engines.cpu`): `[engine]
    # dtype` is the GPU's. None: bfloat16 where the CPU has bf16 arithmetic, float32 elsewhere.
    cpu_dtype: str | None = None
    fit: FitData | None = None
    download: DownloadData | None = None


@dataclass(frozen=True)
class Preset:
    name: str
    path: pathlib.Path
    architecture: str
    modalities: frozenset[str]
    engine_args: dict = field(default_factory=dict)
    quirks: Quirks = field(default_factory=Quirks)
    trust_remote_code: bool = False
    source: str = ""
    description: str = ""
    local_test: bool = False
    cpu_refuses: dict = field(default_factory=dict)
    cpu_dtype: str | None = None  # `PresetFile.cpu_dtype`
    # Modalities this preset takes that the engine running it cannot, each with the reason.
    unavailable: dict = field(default_factory=dict)
    # What a folder without a preset was assumed to be (`folder.read_folder`); empty for a preset.
    assumed: tuple[str, ...] = ()
    fit: FitData | None = None
    download: DownloadData | None = None
    # The layout `on_gpus` applied (how many GPUs, the arguments it set): part of the identity,
    # since those arguments change numerics. None where none was applied.
    layout: str | None = None

    def on_gpus(self, memory_gib: float, count: int) -> Preset:
        """This preset laid out as it needs for `count` GPUs of `memory_gib` each (its
        `[fit.layouts]`), where it holds a layout those GPUs can take; else as it is."""
        from .fit import runtime_layout

        layout = runtime_layout(self, memory_gib, count)
        if layout is None:
            return self
        args = layout.engine_args()
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        return dataclasses.replace(
            self,
            engine_args={**self.engine_args, **args},
            layout=f"gpus={layout.gpus}, {shown}",
        )

    def on_runtime(self, cpu: bool, memory_bytes: int | None = None) -> Preset:
        """This preset as an engine on vLLM's CPU build (`cpu`) runs it: the modalities that
        build cannot run are taken away, and kept in `unavailable` with their reason; and its
        `gpu_memory_utilization`, there a share of the machine's memory (`memory_bytes`, else
        all of this machine's) that the engine must find free when it starts, is what the model
        needs (`memory_share`): the same rule for every preset and model folder. A preset's own
        value is a share of a GPU, and counts there."""
        if not cpu:
            return self
        changes: dict = {}
        gone = {m: why for m, why in self.cpu_refuses.items() if m in self.modalities}
        if gone:
            changes.update(modalities=self.modalities - set(gone), unavailable=gone)
        from .folder import memory_need

        need = memory_need(self.path, self.engine_args) if self.path.is_dir() else None
        if need is not None:
            share = memory_share(need, memory_bytes or _machine_memory())
            changes["engine_args"] = {**self.engine_args, "gpu_memory_utilization": share}
        return dataclasses.replace(self, **changes) if changes else self

    def as_json(self) -> dict:
        """What `murgat models --json` prints for this preset."""
        return {
            "name": self.name,
            "description": self.description,
            "modalities": sorted(self.modalities),
            "present": (self.path / "config.json").is_file(),
            "path": str(self.path),
            "architecture": self.architecture,
            "engine_args": self.engine_args,
            "quirks": self.quirks.model_dump(),
            "trust_remote_code": self.trust_remote_code,
            "local_test": self.local_test,
            "cpu_refuses": self.cpu_refuses,
            "assumed": list(self.assumed),
            "source": self.source,
        }

    def require_path(self) -> pathlib.Path:
        """The model directory, or `ModelNotFound` naming it and this preset."""
        if not (self.path / "config.json").is_file():
            what = "does not exist" if not self.path.exists() else "has no config.json"
            command = download_command(self)
            hint = (
                " Build the local test models with scripts/setup.sh."
                if self.local_test
                else " Put the weights there, or point --model-path / the preset's path_env at them"
                + (f"; to download them: {command}" if command else "")
                + "."
            )
            raise ModelNotFound(f"model directory {self.path} {what} (preset {self.name!r}).{hint}")
        return self.path


def download_command(preset: Preset) -> str | None:
    """The command that downloads `preset`'s weights into its folder (its repository at its
    revision), or None where the preset names no repository."""
    if preset.download is None:
        return None
    d = preset.download
    return f"hf download {d.repo} --revision {d.revision} --local-dir {preset.path}"


def memory_share(need_bytes: float, total_bytes: int) -> float:
    """The share of `total_bytes` that holds `need_bytes`, rounded up to a hundredth, at most
    `MAX_MEMORY_SHARE`: an engine's `gpu_memory_utilization` on vLLM's CPU build."""
    return min(math.ceil(need_bytes / total_bytes * 100) / 100, MAX_MEMORY_SHARE)


def _machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def available_presets(presets_dir: pathlib.Path = PRESETS_DIR) -> list[str]:
    return sorted(p.stem for p in presets_dir.glob("*.toml"))


def all_presets() -> list[Preset]:
    """Every preset, loaded (`--fit` looks among them for a variant of a model that fits)."""
    return [load_preset(name) for name in available_presets()]


def _models_root(models_root: pathlib.Path | None, env: dict) -> pathlib.Path:
    if models_root is not None:
        return models_root
    if env.get("MURGAT_MODELS_DIR"):
        return pathlib.Path(env["MURGAT_MODELS_DIR"])
    return DEFAULT_MODELS_ROOT


def load_preset(
    name_or_dir: str,
    *,
    path_override: str | os.PathLike | None = None,
    models_root: pathlib.Path | None = None,
    presets_dir: pathlib.Path = PRESETS_DIR,
    env: dict | None = None,
) -> Preset:
    """Resolve a preset name or a model directory into a `Preset` (no model is loaded)."""
    env = dict(os.environ) if env is None else env
    file = presets_dir / f"{name_or_dir}.toml"
    if file.is_file():
        spec = PresetFile.model_validate(tomllib.loads(file.read_text()))
        if path_override:
            path = pathlib.Path(path_override)
        elif spec.path_env and env.get(spec.path_env):
            path = pathlib.Path(env[spec.path_env])
        elif pathlib.Path(spec.path).is_absolute():
            path = pathlib.Path(spec.path)
        else:
            path = _models_root(models_root, env) / spec.path
        unknown = set(spec.modalities) - set(MODALITIES)
        if unknown:
            raise ValueError(f"preset {spec.name}: unknown modalities {sorted(unknown)}")
        return Preset(
            name=spec.name,
            path=path,
            architecture=spec.architecture,
            modalities=frozenset(spec.modalities),
            engine_args=dict(spec.engine),
            quirks=spec.quirks,
            trust_remote_code=spec.trust_remote_code,
            source=str(file),
            description=spec.description,
            local_test=spec.local_test,
            cpu_refuses=dict(spec.cpu_refuses),
            cpu_dtype=spec.cpu_dtype,
            fit=spec.fit,
            download=spec.download,
        )
    directory = pathlib.Path(path_override or name_or_dir)
    if directory.is_dir() or os.sep in name_or_dir or name_or_dir.startswith("."):
        return preset_from_directory(directory)
    raise ValueError(
        f"{name_or_dir!r} is neither a preset ({', '.join(available_presets(presets_dir))}) "
        "nor a model directory"
    )


def preset_from_directory(directory: pathlib.Path) -> Preset:
    """A preset for a bare model folder: architecture, modalities and limits read from its own
    config and processor files, every default it falls back on named in `assumed`."""
    from .folder import read_folder

    found = read_folder(directory)
    modalities = frozenset(found["modalities"])
    return Preset(
        name=directory.name or str(directory),
        path=directory,
        architecture=found["architecture"],
        modalities=modalities,
        engine_args=found["engine_args"],
        quirks=Quirks(
            video_as_images="video" not in modalities and "image" in modalities,
            max_audio_seconds=found["max_audio_seconds"],
        ),
        source=f"directory {directory}",
        assumed=found["assumed"],
    )
