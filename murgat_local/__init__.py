"""murgat_local: fact-level multimodal attribution scoring (MURGAT) on local, open-weight judges."""

from . import offline as _offline

_offline.enforce()

__version__ = "0.1.0"
