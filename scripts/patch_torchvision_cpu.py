"""CPU route only: let PyPI's CUDA-linked torchvision import beside the CPU build of torch.

PyPI's torchvision wheel for Linux links its C++ ops against CUDA torch. Beside `torch+cpu`
its `_C` extension does not load and the package dies at import registering meta kernels for
ops that do not exist (`operator torchvision::nms does not exist`). transformers' Qwen-Omni
video processor only needs torchvision's pure-Python transforms, so the registrations are made
conditional on the ops having loaded. Idempotent; refuses to touch an install whose ops load
(a real GPU install is left as it is).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

MARK = "# murgat_local: registrations guarded for CPU torch"
OLD = """from torchvision import (
    _autograd_registrations,
    _meta_registrations,
    datasets,"""
NEW = f"""{MARK}
if extension._has_ops():
    from torchvision import _autograd_registrations, _meta_registrations  # noqa: F401
from torchvision import (
    datasets,"""


def main() -> int:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        print("torchvision not installed: nothing to patch")
        return 0
    init = pathlib.Path(spec.origin)
    text = init.read_text()
    if MARK in text:
        print(f"already patched: {init}")
        return 0
    import torch

    if "+cpu" not in torch.__version__:
        print(f"torch {torch.__version__} is not a CPU build: leaving torchvision alone")
        return 0
    if OLD not in text:
        print(f"unexpected torchvision layout in {init}; not patched", file=sys.stderr)
        return 1
    init.write_text(text.replace(OLD, NEW))
    print(f"patched {init}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
