"""Engine output to a log file, at the file-descriptor level, while our own output stays on the terminal.

Engines print from places `sys.stdout` never sees: C libraries, and vLLM's engine-core child
processes, which inherit descriptors 1 and 2. So the descriptors themselves are pointed at the
log, and what we mean to show (progress, tables, errors) is written to copies of the terminal's
descriptors taken before the switch.
"""

from __future__ import annotations

import os
import pathlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Terminal:
    """Text streams on the terminal's stdout and stderr as they were before the redirection."""

    stdout: TextIO
    stderr: TextIO


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass  # a closed or absent stream has nothing buffered worth keeping


@contextmanager
def redirect_fds(log_path: pathlib.Path) -> Iterator[Terminal]:
    """Point descriptors 1 and 2 at `log_path` (appended to) for the block; yield the terminal.

    Child processes started inside the block write to the log too. The descriptors are restored
    on the way out, also when the block raises.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    _flush_std()
    saved = (os.dup(1), os.dup(2))  # not inheritable: children never get the terminal
    log = open(log_path, "ab", buffering=0)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    terminal = Terminal(
        stdout=os.fdopen(os.dup(saved[0]), "w", buffering=1, encoding=encoding, errors="replace"),
        stderr=os.fdopen(os.dup(saved[1]), "w", buffering=1, encoding=encoding, errors="replace"),
    )
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield terminal
    finally:
        _flush_std()
        for stream in (terminal.stdout, terminal.stderr):
            stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for stream in (terminal.stdout, terminal.stderr):
            stream.close()
        for fd in saved:
            os.close(fd)
        log.close()
