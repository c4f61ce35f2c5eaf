"""Room in memory before an end-to-end module starts its engines, on two workers.

scripts/test.sh runs the suite on two workers (tests/support/suite_order.py). Each tiny vLLM
engine holds about 2.4 GiB (256 MiB of it KV cache), and one module may start several (a `murgat
score` child: three; data-parallel: two servers), so two modules at their peak can take most of
a 24 GiB machine. Before a module a worker waits (polling) until the machine has `min_gib`
available, first closing the engine pool's idle engines if it holds them; past `timeout_s` it
goes on. Only between modules: there the worker holds no engine of its own (the last module's
fixtures are torn down), so two workers waiting at once leave each other the room. A wait
before each test did not work: the memory a waiting worker waits for can be held by the other
worker's module fixtures while that worker waits too (measured: both idle for minutes).

A module that holds several engines at once for minutes (`@pytest.mark.memory_heavy`) also runs
while no other such module does (`one_at_a_time`, a lock the two workers share): a wait before
it cannot see what the other worker's module will still start. CI lost a run to that pair
(tests/e2e/test_families_e2e.py beside a two-node Ray run: the worker was killed).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import time
from collections.abc import Callable, Iterator

import psutil

WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
BEFORE_MODULE_GIB = float(os.environ.get("MURGAT_TEST_MODULE_MIN_GIB", "8"))


def available_gib() -> float:
    return psutil.virtual_memory().available / 2**30


def wait_for_room(
    min_gib: float,
    timeout_s: float,
    free_first: Callable[[], None] | None = None,
    available: Callable[[], float] = available_gib,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = 2.0,
) -> float:
    """Seconds waited until `available()` reached `min_gib` (or `timeout_s` passed); `free_first`
    is called once, when there is too little at the start."""
    if available() >= min_gib:
        return 0.0
    if free_first is not None:
        free_first()
    waited = 0.0
    while available() < min_gib and waited < timeout_s:
        sleep(poll_s)
        waited += poll_s
    return waited


@contextlib.contextmanager
def one_at_a_time(
    path: pathlib.Path,
    timeout_s: float,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = 2.0,
) -> Iterator[float]:
    """Holds the lock file `path` (an exclusive `flock`, which the kernel releases if its holder
    dies) for the body, and yields the seconds waited for it; past `timeout_s` the body runs
    without it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        waited, held = 0.0, False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if waited >= timeout_s:
                    break
                sleep(poll_s)
                waited += poll_s
        try:
            yield waited
        finally:
            if held:
                fcntl.flock(f, fcntl.LOCK_UN)
