"""Is a model folder whole? File checks only (nothing imports transformers or loads a tensor),
so a half-copied folder is named in seconds, before any engine starts.

The quick check (`quick_check`, run by every command before its first engine) reads:
- every shard a `*.index.json` names exists, and holds the tensors the index puts there;
- every safetensors file's header parses, and the file is exactly 8 + header + the data its
  tensors span (a truncated copy is found without hashing);
- the tokenizer files (tokenizer_config.json and a vocabulary) and, for a model that takes
  media, a processor file are present; the small JSON files parse, a large one ends whole;
- where a MANIFEST.json covers the folder (`manifest.py`), every file it lists is there with its size.
`verify_folder` adds the manifest's sha256 of every file (`murgat models --verify`).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import manifest as manifests
from .presets import ModelNotFound, Preset
from .shards import DTYPE_BYTES, Damaged, safetensors_header

_SMALL_JSON = 1 << 20

# A vocabulary: one of these beside tokenizer_config.json (tekken.json, Mistral's, stands alone).
_VOCABULARIES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "vocab.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tekken.json",
)
_STANDALONE_VOCABULARIES = ("tekken.json",)
_PROCESSORS = (
    "preprocessor_config.json",
    "processor_config.json",
    "video_preprocessor_config.json",
)
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


@dataclass(frozen=True)
class Problem:
    path: pathlib.Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class Report:
    folder: pathlib.Path
    problems: list[Problem] = field(default_factory=list)
    headers: int = 0  # safetensors headers read
    manifest: pathlib.Path | None = None
    hashed: int = 0  # files whose sha256 was compared with the manifest's

    @property
    def whole(self) -> bool:
        return not self.problems

    def as_json(self) -> dict:
        return {
            "path": str(self.folder),
            "whole": self.whole,
            "headers": self.headers,
            "manifest": str(self.manifest) if self.manifest else None,
            "hashed": self.hashed,
            "problems": [{"path": str(p.path), "reason": p.reason} for p in self.problems],
        }


class ModelIncomplete(ModelNotFound):
    """A model folder that is there but not whole: a file missing, cut short or changed."""


def safetensors_tensors(path: pathlib.Path) -> set[str]:
    """The tensor names of a whole safetensors file; `Damaged` with the reason otherwise."""
    size = path.stat().st_size
    length, header = safetensors_header(path)
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, stop = (int(x) for x in info["data_offsets"])
            shape = [int(d) for d in info["shape"]]
        except (KeyError, TypeError, ValueError):
            raise Damaged(
                f"its header's entry for tensor {name} has no data_offsets or shape"
            ) from None
        width = DTYPE_BYTES.get(info.get("dtype"))
        count = 1
        for d in shape:
            count *= d
        if not 0 <= begin <= stop or (width is not None and stop - begin != width * count):
            raise Damaged(f"its header's entry for tensor {name} is inconsistent ({info})")
        end = max(end, stop)
    expected = 8 + length + end
    if size < expected:
        raise Damaged(f"truncated: {size} bytes, its header says {expected}")
    if size > expected:
        raise Damaged(f"{size - expected} bytes more than its header accounts for ({expected})")
    return {k for k in header if k != "__metadata__"}


def _json_problem(path: pathlib.Path) -> str | None:
    """Why a JSON file is not whole: a small one must parse; a large one (a tokenizer.json of
    tens of MB) must at least end as a JSON document does."""
    try:
        if path.stat().st_size <= _SMALL_JSON:
            json.loads(path.read_bytes())
            return None
        with path.open("rb") as fh:
            fh.seek(-64, 2)
            tail = fh.read().rstrip()
    except ValueError as e:
        return f"does not parse as JSON ({e})"
    except OSError as e:
        return f"cannot be read ({e})"
    return (
        None
        if tail.endswith((b"}", b"]"))
        else "cut short: it does not end as a JSON document does"
    )


def _check_weights(folder: pathlib.Path, report: Report) -> None:
    found = report.problems.append
    indexed: dict[str, set[str]] = {}  # shard -> tensors an index puts there
    for index in sorted(folder.glob("*.index.json")):
        try:
            weight_map = json.loads(index.read_bytes()).get("weight_map") or {}
        except (ValueError, AttributeError) as e:
            found(Problem(index, f"does not parse as an index ({e})"))
            continue
        shards: dict[str, set[str]] = {}
        for tensor, shard in weight_map.items():
            shards.setdefault(shard, set()).add(tensor)
        for shard, tensors in sorted(shards.items()):
            if not (folder / shard).is_file():
                found(
                    Problem(
                        folder / shard, f"missing: {index.name} names it ({len(tensors)} tensors)"
                    )
                )
            elif shard.endswith(".safetensors"):
                indexed.setdefault(shard, set()).update(tensors)
    singles = {p.name for p in folder.glob("*.safetensors") if p.is_file()}
    for name in sorted(singles | indexed.keys()):
        path = folder / name
        if not path.is_file():
            continue
        try:
            held = safetensors_tensors(path)
        except Damaged as e:
            found(Problem(path, str(e)))
            continue
        report.headers += 1
        absent = sorted(indexed.get(name, set()) - held)
        if absent:
            more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
            found(
                Problem(
                    path,
                    f"the index puts tensor {absent[0]}{more} here; its header has none of that",
                )
            )
    if not indexed and not any(p.is_file() and p.name.endswith(_WEIGHTS) for p in folder.iterdir()):
        found(
            Problem(
                folder / "model.safetensors",
                "missing: the folder holds no weights "
                f"({', '.join('*' + s for s in _WEIGHTS)}) and no index naming them",
            )
        )


def _check_tokenizer(folder: pathlib.Path, report: Report) -> None:
    names = {p.name for p in folder.iterdir()}
    if names & set(_STANDALONE_VOCABULARIES):
        return
    if "tokenizer_config.json" not in names:
        report.problems.append(
            Problem(folder / "tokenizer_config.json", "missing: every tokenizer needs it")
        )
    vocabularies = names & set(_VOCABULARIES)
    if not vocabularies:
        others = ", ".join(_VOCABULARIES[1:])
        report.problems.append(
            Problem(folder / "tokenizer.json", f"missing, and no other vocabulary ({others})")
        )
    elif vocabularies == {"vocab.json"} and "merges.txt" not in names:
        report.problems.append(
            Problem(folder / "merges.txt", "missing: vocab.json without tokenizer.json needs it")
        )


def _check_processor(folder: pathlib.Path, modalities: Iterable[str], report: Report) -> None:
    media = sorted(set(modalities) - {"text"})
    if media and not any((folder / n).is_file() for n in _PROCESSORS):
        report.problems.append(
            Problem(
                folder / _PROCESSORS[0],
                f"missing: the model takes {', '.join(media)} "
                f"and needs one of {', '.join(_PROCESSORS)}",
            )
        )


def quick_check(folder: pathlib.Path, modalities: Iterable[str]) -> Report:
    """Everything about `folder` that needs no hashing (see the module's docstring); the model
    takes `modalities` (a preset's, or what `folder.read_folder` infers)."""
    folder = pathlib.Path(folder)
    report = Report(folder)
    if not folder.is_dir():
        report.problems.append(Problem(folder, "missing: no such folder"))
        return report
    for name in ("config.json",):
        if not (folder / name).is_file():
            report.problems.append(Problem(folder / name, "missing: every model folder needs it"))
    _check_weights(folder, report)
    _check_tokenizer(folder, report)
    _check_processor(folder, modalities, report)
    for path in sorted(folder.glob("*.json")):
        if path.name != manifests.MANIFEST and not path.name.endswith(".index.json"):
            why = _json_problem(path)
            if why:
                report.problems.append(Problem(path, why))
    _check_manifest_sizes(folder, report)
    return _one_per_file(report)


def _check_manifest_sizes(folder: pathlib.Path, report: Report) -> dict:
    try:
        covered = manifests.entries_for(folder)
    except ValueError as e:
        report.problems.append(Problem(folder.parent / manifests.MANIFEST, str(e)))
        return {}
    if covered is None:
        return {}
    report.manifest, entries = covered
    for path, entry in sorted(entries.items()):
        if not path.is_file():
            report.problems.append(Problem(path, f"missing: {report.manifest} lists it"))
        elif path.stat().st_size != entry.size:
            report.problems.append(
                Problem(path, f"{path.stat().st_size} bytes, {report.manifest} says {entry.size}")
            )
    return entries


def _one_per_file(report: Report) -> Report:
    """The first reason found for each file (a truncated shard is also the wrong size)."""
    seen: dict[pathlib.Path, Problem] = {}
    for p in report.problems:
        seen.setdefault(p.path, p)
    report.problems = list(seen.values())
    return report


def verify_folder(
    folder: pathlib.Path,
    modalities: Iterable[str],
    *,
    on_bytes: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> Report:
    """The quick check, then the sha256 of every file the manifest lists and the quick check
    found nothing wrong with, several at a time; `on_total(bytes)` once, `on_bytes(n)` as read."""
    report = quick_check(folder, modalities)
    found = manifests.entries_for(folder) if report.manifest else None
    entries = found[1] if found is not None else {}
    named = {p.path for p in report.problems}
    todo = [(path, entry) for path, entry in sorted(entries.items()) if path not in named]
    if on_total is not None:
        on_total(sum(e.size for _, e in todo))
    digests = manifests.hash_files([p for p, _ in todo], on_bytes, workers)
    for (path, entry), digest in zip(todo, digests):
        if digest != entry.sha256:
            report.problems.append(
                Problem(path, f"sha256 {digest} differs from {report.manifest}'s {entry.sha256}")
            )
    report.hashed = len(todo)
    return report


def require_whole(preset: Preset) -> None:
    """Raise `ModelIncomplete` naming every file of `preset`'s folder that is not whole (the
    quick check). A folder that is not there at all is left to `Preset.require_path`."""
    if not (preset.path / "config.json").is_file():
        return
    report = quick_check(preset.path, preset.modalities)
    if not report.whole:
        listed = "".join(f"\n  {p}" for p in report.problems)
        raise ModelIncomplete(
            f"model folder {preset.path} (model {preset.name!r}) is not whole:{listed}\n"
            f"Copy it again; `murgat models --verify {preset.path}` checks it."
        )
