"""murgat_local: fact-level multimodal attribution scoring (MURGAT) on local, open-weight judges.

Importing the package changes nothing in the process (no environment variables); the `murgat`
command enforces offline mode (`murgat_local.offline`) when it runs.
"""

__version__ = "0.1.0"
