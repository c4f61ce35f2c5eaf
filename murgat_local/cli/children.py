"""The processes a run started (engine cores, servers, Ray workers), stopped before it exits.

An interrupted run says "engines stopped": after the engines' own shutdown ran, this waits for
every child process of ours to end, and ends those that do not. Python's multiprocessing
resource tracker is left alone: it ignores SIGTERM by design and ends by itself once we exit,
after freeing the shared memory it tracks (killing it would leak that memory).
"""

from __future__ import annotations

import psutil  # type: ignore[import-untyped]  # no types shipped; types-psutil is not locked

_RESOURCE_TRACKER = "multiprocessing.resource_tracker"


def _is_resource_tracker(proc: psutil.Process) -> bool:
    try:
        return any(_RESOURCE_TRACKER in part for part in proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def stop_children(grace_s: float = 15.0, term_s: float = 5.0) -> list[str]:
    """Waits up to `grace_s` for this process's descendants to end, then sends SIGTERM to the
    rest, then SIGKILL after `term_s`. Returns a line per process it had to end itself."""
    try:
        kids = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    kids = [p for p in kids if not _is_resource_tracker(p)]
    _, alive = psutil.wait_procs(kids, timeout=grace_s)
    ended: list[str] = []
    for sig_name, timeout in (("SIGTERM", term_s), ("SIGKILL", term_s)):
        for p in alive:
            try:
                name = p.name()
                if sig_name == "SIGTERM":
                    p.terminate()
                else:
                    p.kill()
            except psutil.NoSuchProcess:  # it ended by itself meanwhile: nothing to report
                continue
            ended.append(f"{sig_name} to pid {p.pid} ({name})")
        _, alive = psutil.wait_procs(alive, timeout=timeout)
    return ended
