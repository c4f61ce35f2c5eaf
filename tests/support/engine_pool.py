"""Engines started once per test session and shared by every module that asks for the same one.

`pool.get(model, engine="vllm", **options)` returns a started engine (what `make_engine` returns,
built exactly as the modules built their own); the same (engine, model, options) gets the same
engine. At most `limits[engine]` engines of a kind are open: starting one more closes the least
recently used (a later `get` starts it again), which bounds memory; so does a machine short of
memory (idle engines are closed before a start while less than `min_available_gib` is free).
The session closes them all together (`close_all`); so does a module that does not use the
pool, before it runs (it may start engines of its own: tests/e2e/conftest.py), so the modules
that share engines run one after another (test_engine_*). A module that needs an engine of its own says why where it makes it.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable

from murgat_local.engines import Engine, close_all, load_preset, make_engine
from support.memory_gate import WORKERS, available_gib
from support.paths import require_model

# vLLM's CPU build: about 2.4 GiB a tiny model (the test presets' 256 MiB of KV cache, and the
# engine's two processes), so 4 stay under ~10 GiB. A transformers engine on a tiny model is
# a few hundred MB in this process (gemma3-270m: 1.2 GiB). On two workers (scripts/test.sh) the
# other worker's engines need the room (a `murgat score` child holds three, a two-node Ray run
# four): 1 and 2. The pooled modules ask for one vLLM engine at a time (a module's fixture
# holds one model's engine until its tests are done), so 1 costs only restarts between modules.
LIMITS = {
    "vllm": int(os.environ.get("MURGAT_TEST_POOL_VLLM", "1" if WORKERS > 1 else "4")),
    "transformers": int(
        os.environ.get("MURGAT_TEST_POOL_TRANSFORMERS", "2" if WORKERS > 1 else "8")
    ),
}
# Before a start, idle engines are closed (least recently used first) while the machine has less
# memory available than this: the other worker's engines come and go.
MIN_AVAILABLE_GIB = float(os.environ.get("MURGAT_TEST_POOL_MIN_AVAILABLE_GIB", "8"))
DEFAULT_LIMIT = 2


def _key(engine: str, model: str, options: dict) -> tuple:
    return engine, model, tuple(sorted((k, repr(v)) for k, v in options.items()))


class EnginePool:
    def __init__(
        self,
        limits: dict[str, int] | None = None,
        available: Callable[[], float] = available_gib,
        min_available_gib: float = MIN_AVAILABLE_GIB,
    ):
        self.limits = dict(LIMITS if limits is None else limits)
        self.available, self.min_available_gib = available, min_available_gib
        self._open: OrderedDict[tuple, Engine] = OrderedDict()  # least recently used first
        self.started: list[tuple] = []  # every start, in order (a key twice: it was evicted)
        self.start_s = 0.0

    def get(self, model: str, engine: str = "vllm", **options) -> Engine:
        key = _key(engine, model, options)
        if key in self._open:
            self._open.move_to_end(key)
            return self._open[key]
        require_model(model)
        self._evict(engine, room_for=1)
        while self._open and self.available() < self.min_available_gib:
            self._open.popitem(last=False)[1].close()
        t0 = time.monotonic()
        eng = make_engine(engine, load_preset(model), **options)
        self.start_s += time.monotonic() - t0
        self._open[key] = eng
        self.started.append(key)
        return eng

    def _evict(self, engine: str, room_for: int) -> None:
        limit = self.limits.get(engine, DEFAULT_LIMIT)
        same = [k for k in self._open if k[0] == engine]
        for k in same[: max(0, len(same) + room_for - limit)]:
            self._open.pop(k).close()

    def close(self) -> None:
        engines, self._open = list(self._open.values()), OrderedDict()
        close_all(engines)
