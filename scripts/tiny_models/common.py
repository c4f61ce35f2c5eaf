"""What every family builder shares: saving weights, renaming tensors, and the checks run on a
built folder before it replaces the old one."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

_ROUND_TRIP_TEXT = 'Hello, user! naïve café — 日本語 🙂 ∑x²\n\n\tYES/NO {"verdict": 1}'


def padded(n: int, multiple: int = 64) -> int:
    """A vocabulary size rounded up, as real checkpoints round theirs."""
    return int(math.ceil(n / multiple) * multiple)


def save_weights_bf16(model, directory: Path) -> None:
    import torch

    model.to(torch.bfloat16)
    model.save_pretrained(directory, safe_serialization=True)


def rewrite_safetensors(directory: Path, rename) -> None:
    """Rename tensor keys in every safetensors shard of ``directory`` (and its index)."""
    from safetensors.torch import load_file, save_file

    for shard in sorted(directory.glob("*.safetensors")):
        tensors = load_file(str(shard))
        renamed = {rename(k): v.contiguous() for k, v in tensors.items()}
        save_file(renamed, str(shard), metadata={"format": "pt"})
    index = directory / "model.safetensors.index.json"
    if index.exists():
        data = json.loads(index.read_text())
        data["weight_map"] = {rename(k): v for k, v in data["weight_map"].items()}
        index.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


class Checks:
    """Problems found in a built folder, gathered so one failed build names all of them."""

    def __init__(self, tokenizer):
        self.tok = tokenizer
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        self.problems.append(problem)

    def token(self, label: str, config_id, token: str) -> None:
        """The id the config gives `label` must be the tokenizer's id of `token`."""
        actual = self.tok.convert_tokens_to_ids(token)
        if config_id != actual:
            self.add(f"{label}={config_id} but tokenizer has {token!r}={actual}")

    def single_token(self, text: str) -> None:
        vocab = self.tok.get_vocab()
        if text not in vocab or self.tok.encode(text, add_special_tokens=False) != [vocab[text]]:
            self.add(f"{text!r} is not a single vocabulary token")

    def attribute(self, owner, attr: str, expected) -> None:
        if getattr(owner, attr, None) != expected:
            self.add(
                f"{type(owner).__name__}.{attr} is {getattr(owner, attr, None)!r}, not {expected!r}"
            )

    def common(self, text_vocab: int) -> None:
        """Unicode text round-trips, and every token id fits the model's embedding."""
        ids = self.tok.encode(_ROUND_TRIP_TEXT, add_special_tokens=False)
        if self.tok.decode(ids) != _ROUND_TRIP_TEXT:
            self.add("tokenizer does not round-trip unicode text")
        if len(self.tok) > text_vocab:
            self.add(f"tokenizer has {len(self.tok)} tokens, model vocab only {text_vocab}")


def normalise_permissions(directory: Path) -> None:
    """Some writers go through mkstemp (mode 0600); give every file the usual umask mode."""
    umask = os.umask(0)
    os.umask(umask)
    for path in directory.rglob("*"):
        if path.is_file():
            path.chmod(0o666 & ~umask)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
