"""install.sh's model step, run by the installed package: `python -m murgat_local.bundle.place
OUT --plan FILE`. Copies the bundle's model folders into the models root that the installed
`murgat` reads (MURGAT_MODELS_DIR where set, else its default: under VENV or HOME, so no variable
is needed), keeps their manifest entries in that root's MANIFEST.json (merged with what earlier
bundles put there), and writes install.sh's plan to FILE, one `KIND NAME` a line: `verify` what
names each folder (its preset, else its path) for `murgat models --verify`, `smoke` the fewest
test models that cover every modality the test models accept, `test` every test model, `judge`
the model the closing command names. A file already there with the manifest's size and sha256
is kept.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

from ..engines import manifest as manifests
from ..engines.presets import _models_root


def place(bundle: pathlib.Path) -> tuple[pathlib.Path, list[str]]:
    data = json.loads((bundle / manifests.MANIFEST).read_text(encoding="utf-8"))
    info = data["bundle"]
    root = _models_root(None, dict(os.environ)).resolve()
    folders = [m["folder"] for m in info["models"]]
    ours = {
        e["path"][len("models/") :]: e
        for e in data["files"]
        if e["path"].split("/", 2)[0] == "models" and e["path"].split("/")[1] in folders
    }
    total = sum(e["size"] for e in ours.values())
    done = 0
    for rel, e in sorted(ours.items()):
        src, dst = bundle / "models" / rel, root / rel
        if (
            dst.is_file()
            and dst.stat().st_size == e["size"]
            and manifests.sha256_file(dst) == e["sha256"]
        ):
            done += e["size"]
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".part")
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            while block := fin.read(1 << 22):
                fout.write(block)
                done += len(block)
                if total and sys.stderr.isatty():
                    print(f"\r[install] models: {done * 100 // total:3d}%", end="", file=sys.stderr)
        tmp.replace(dst)
    if sys.stderr.isatty():
        print(file=sys.stderr)

    # The root's manifest: earlier entries for other folders, this bundle's for its own.
    target = root / manifests.MANIFEST
    kept = []
    if target.is_file():
        kept = [
            {"path": e.path, "size": e.size, "sha256": e.sha256}
            for e in manifests.read_manifest(target)
            if e.path.split("/", 1)[0] not in folders
        ]
    rows = kept + [{"path": k, "size": v["size"], "sha256": v["sha256"]} for k, v in ours.items()]
    rows.sort(key=lambda r: r["path"])
    tmp = target.with_name(manifests.MANIFEST + ".tmp")
    tmp.write_text(
        json.dumps(
            {"format": manifests.FORMAT, "version": manifests.VERSION, "files": rows}, indent=1
        )
        + "\n",
        encoding="utf-8",
    )
    tmp.replace(target)
    names = [m["preset"] or str(root / m["folder"]) for m in info["models"]]
    return root, names


def smoke_cover(models: list[dict]) -> list[str]:
    """The fewest test models (greedily, in the bundle's order) whose modalities together are
    all that the test models accept: one engine start per modality at most."""
    tests = [(m["preset"], set(m.get("modalities", ["text"]))) for m in models if m["test"]]
    tests = [(name, kinds) for name, kinds in tests if name]
    left = set().union(*(kinds for _, kinds in tests)) if tests else set()
    chosen: list[str] = []
    while left:
        name, kinds = max(tests, key=lambda t: len(t[1] & left))  # the first of the best
        chosen.append(name)
        left -= kinds
    return chosen


def plan(info: dict, root: pathlib.Path) -> list[tuple[str, str]]:
    """install.sh's plan (see the module's docstring)."""
    models = info["models"]
    rows = [("verify", m["preset"] or str(root / m["folder"])) for m in models]
    rows += [("smoke", name) for name in smoke_cover(models)]
    tests = [m["preset"] for m in models if m["test"] and m["preset"]]
    rows += [("test", name) for name in tests]
    own = [m["preset"] or str(root / m["folder"]) for m in models if not m["test"]]
    judge = (own or [t for t in tests if t == "tiny-qwen3-omni"] or tests or ["MODEL"])[0]
    return [*rows, ("judge", judge)]


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m murgat_local.bundle.place")
    parser.add_argument("bundle", type=pathlib.Path)
    parser.add_argument("--plan", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    bundle = args.bundle.resolve()
    root, _ = place(bundle)
    print(f"[install] models root: {root}", file=sys.stderr)
    info = json.loads((bundle / manifests.MANIFEST).read_text(encoding="utf-8"))["bundle"]
    args.plan.write_text("".join(f"{kind} {name}\n" for kind, name in plan(info, root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
