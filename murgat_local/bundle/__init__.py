"""Air-gapped installs in two phases: `murgat bundle` stages every wheel and model folder on a
connected machine (`build`), and the bundle's install.sh installs and checks them on a box with
no network (`check`, run by the box's Python before anything is installed; `place`, run by the
installed package)."""

from .build import Bundle, build_bundle, human, resolve_models, targets
from .wheels import BundleError, Pin, read_lock

__all__ = [
    "Bundle",
    "BundleError",
    "Pin",
    "build_bundle",
    "human",
    "read_lock",
    "resolve_models",
    "targets",
]
