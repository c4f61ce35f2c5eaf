"""`murgat models --verify` and the quick check every command runs before an engine starts: on
copies of a tiny model folder (the originals under .local/models are never touched), whole,
truncated, one byte changed, a shard or a tokenizer file missing. No engine starts here."""

from __future__ import annotations

import json
import shutil
import struct
import time

import pytest
from support.model_folder_fixtures import MODEL, _truncate
from support.paths import require_model
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.engines import ModelNotFound, load_preset
from murgat_local.engines.manifest import MANIFEST, read_manifest, write_manifest
from murgat_local.engines.verify import ModelIncomplete, quick_check, require_whole, verify_folder


def _header(path):
    with path.open("rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        return n, json.loads(fh.read(n))


def _write_safetensors(path, tensors: dict, data: bytes):
    """`tensors`: name -> (dtype, shape, bytes of `data`), laid out one after another."""
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, (dtype, shape, blob) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def _shard(folder):
    """The single-file checkpoint split into two shards and an index, as large checkpoints come."""
    single = folder / "model.safetensors"
    n, header = _header(single)
    data = single.read_bytes()[8 + n :]
    names = [k for k in header if k != "__metadata__"]
    halves = {
        "model-00001-of-00002.safetensors": names[: len(names) // 2],
        "model-00002-of-00002.safetensors": names[len(names) // 2 :],
    }
    weight_map = {}
    for shard, part in halves.items():
        tensors = {}
        for name in part:
            begin, end = header[name]["data_offsets"]
            tensors[name] = (header[name]["dtype"], header[name]["shape"], data[begin:end])
            weight_map[name] = shard
        _write_safetensors(folder / shard, tensors, b"")
    single.unlink()
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": weight_map})
    )
    return list(halves)


def _files(report):
    return {p.path.name for p in report.problems}


def test_a_whole_copy_is_whole_and_quick(folder):
    started = time.monotonic()
    report = quick_check(folder, load_preset(str(folder)).modalities)
    assert report.whole, report.problems
    assert time.monotonic() - started < 2


def test_a_truncated_single_file_checkpoint_is_named_within_seconds(folder):
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    _truncate(weights, size - 1000)
    started = time.monotonic()
    report = quick_check(folder, {"text", "image"})
    assert time.monotonic() - started < 2
    assert not report.whole and _files(report) == {"model.safetensors"}
    reason = report.problems[0].reason
    assert "truncated" in reason and str(size - 1000) in reason and str(size) in reason
    # a copy cut inside its header is named too, not a parse error
    _truncate(weights, 100)
    assert "truncated" in quick_check(folder, {"text"}).problems[0].reason


def test_a_sharded_checkpoint_names_a_missing_and_a_truncated_shard(folder):
    first, second = _shard(folder)
    assert quick_check(folder, {"text", "image"}).whole
    (folder / second).unlink()
    _truncate(folder / first, (folder / first).stat().st_size - 10)
    report = quick_check(folder, {"text", "image"})
    assert _files(report) == {first, second}
    why = {p.path.name: p.reason for p in report.problems}
    assert "missing" in why[second] and "model.safetensors.index.json" in why[second]
    assert "truncated" in why[first]
    assert all(p.path.parent == folder for p in report.problems)


def test_a_missing_tokenizer_or_processor_file_is_named(folder):
    (folder / "tokenizer_config.json").unlink()
    assert _files(quick_check(folder, {"text"})) == {"tokenizer_config.json"}
    shutil.copy(require_model(MODEL) / "tokenizer_config.json", folder)
    (folder / "tokenizer.json").unlink()
    report = quick_check(folder, {"text"})
    assert _files(report) == {"tokenizer.json"} and "tokenizer.model" in report.problems[0].reason
    shutil.copy(require_model(MODEL) / "tokenizer.json", folder)
    (folder / "processor_config.json").unlink()
    assert quick_check(folder, {"text"}).whole  # a text-only model needs no processor
    report = quick_check(folder, {"text", "image"})
    assert not report.whole and "image" in report.problems[0].reason
    assert "preprocessor_config.json" in report.problems[0].reason


def test_one_changed_byte_of_the_same_size_is_caught_only_against_a_manifest(folder):
    root = folder.parent
    manifest = write_manifest(root, [folder])
    assert manifest == root / MANIFEST
    entries = read_manifest(manifest)
    assert {e.path for e in entries} >= {f"{MODEL}/model.safetensors", f"{MODEL}/tokenizer.json"}
    assert all(len(e.sha256) == 64 and e.size > 0 for e in entries)
    assert verify_folder(folder, {"text", "image"}).whole
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0xFF  # inside the last tensor: the header still holds, the size is the same
    weights.write_bytes(bytes(data))
    assert quick_check(folder, {"text", "image"}).whole
    seen = []
    report = verify_folder(folder, {"text", "image"}, on_bytes=seen.append)
    assert _files(report) == {"model.safetensors"} and "sha256" in report.problems[0].reason
    assert sum(seen) == sum(e.size for e in entries)  # progress over every byte hashed
    # the manifest's sizes are checked without hashing
    (folder / "generation_config.json").write_text("{}")
    assert _files(quick_check(folder, {"text", "image"})) == {"generation_config.json"}


def test_a_preset_pointing_at_a_damaged_folder_is_refused_naming_the_file(folder):
    preset = load_preset(MODEL, models_root=folder.parent)
    require_whole(preset)
    _truncate(folder / "model.safetensors", 5000)
    with pytest.raises(ModelIncomplete) as e:
        require_whole(preset)
    assert isinstance(e.value, ModelNotFound)  # refused where a missing folder is
    assert str(folder / "model.safetensors") in str(e.value) and MODEL in str(e.value)


def _cli(*args):
    return CliRunner().invoke(app, ["models", "--verify", *map(str, args)], env={"COLUMNS": "400"})


def test_models_verify_exit_codes_and_output(folder, tmp_path):
    out = _cli(folder)
    assert out.exit_code == 0, out.output
    assert "whole" in out.stdout and str(folder) in out.stdout
    write_manifest(folder.parent, [folder])
    out = _cli(folder)
    assert out.exit_code == 0 and "sha256" in out.stdout, out.output
    (folder / "tokenizer.json").write_bytes(
        b"{" + b" " * ((folder / "tokenizer.json").stat().st_size - 1)
    )
    _truncate(folder / "model.safetensors", 3000)
    out = _cli(folder)
    assert out.exit_code == 1, out.output
    assert (
        str(folder / "model.safetensors") in out.stdout
        and str(folder / "tokenizer.json") in out.stdout
    )
    out = CliRunner().invoke(app, ["models", "--verify", "--json", str(folder)])
    listed = json.loads(out.stdout)
    assert out.exit_code == 1 and listed[0]["whole"] is False
    assert {p["path"] for p in listed[0]["problems"]} == {
        str(folder / "model.safetensors"),
        str(folder / "tokenizer.json"),
    }
    assert _cli(tmp_path / "nowhere").exit_code == 2  # not a model: a usage error
    assert CliRunner().invoke(app, ["models", str(folder)]).exit_code == 2  # names go with --verify


def test_models_verify_without_names_checks_the_presets_present_and_lists_the_absent(folder):
    out = CliRunner().invoke(
        app, ["models", "--verify", "--json"], env={"MURGAT_MODELS_DIR": str(folder.parent)}
    )
    assert out.exit_code == 0, out.output
    listed = {m["name"]: m for m in json.loads(out.stdout)}
    assert listed[MODEL]["whole"] is True and listed[MODEL]["path"] == str(folder)
    assert listed["tiny-qwen3-vl"]["present"] is False and listed["tiny-qwen3-vl"]["whole"] is None
    _truncate(folder / "model.safetensors", 3000)
    out = CliRunner().invoke(
        app, ["models", "--verify"], env={"MURGAT_MODELS_DIR": str(folder.parent), "COLUMNS": "400"}
    )
    assert out.exit_code == 1 and str(folder / "model.safetensors") in out.stdout
    assert "absent" in out.stdout and "tiny-qwen3-vl" in out.stdout
