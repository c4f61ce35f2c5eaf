"""Room in memory before an end-to-end module starts its engines, on two workers.

scripts/test.sh runs the suite on two workers (tests/support/suite_order.py). Each tiny vLLM
engine holds about 3 GiB (1 GiB of it KV cache), and one module may start several (a `murgat
score` child: three; data-parallel: two servers), so two modules at their peak can take most of
a 24 GiB machine. Before a module a worker waits (polling) until the machine has `min_gib`
available, first closing the engine pool's idle engines if it holds them; past `timeout_s` it
goes on. Only between modules: there the worker holds no engine of its own (the last module's
fixtures are torn down), so two workers waiting at once leave each other the room. A wait
before each test did not work: the memory a waiting worker waits for can be held by the other
worker's module fixtures while that worker waits too (measured: both idle for minutes).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

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
