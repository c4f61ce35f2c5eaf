"""Output folders: checked before any model starts, so a run never dies at its last write."""

from __future__ import annotations

import errno
import os
import pathlib


class OutputNotWritable(ValueError):
    """An output folder that cannot be created or written (read-only, full, not a folder)."""


def check_writable(folder: pathlib.Path, what: str = "output folder") -> None:
    """Create `folder` if needed and prove it takes a write (4 KiB, synced, then removed).

    Raises OutputNotWritable naming the folder and the reason.
    """
    folder = pathlib.Path(folder)
    probe = folder / f".murgat-write-check-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as fh:
            fh.write(b"\0" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        reason = {
            errno.EROFS: "read-only file system",
            errno.ENOSPC: "no space left on the device",
            errno.EACCES: "permission denied",
            errno.ENOTDIR: "not a folder",
        }.get(e.errno or 0, e.strerror or str(e))
        raise OutputNotWritable(f"{what} {folder} is not writable: {reason}") from e
    finally:
        try:
            probe.unlink()
        except OSError:
            pass
