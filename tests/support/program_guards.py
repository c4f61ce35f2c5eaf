"""What the program-budget tests share: a toolset that answers at once, a watcher thread that measures
how long a plan held the GIL, a faulthandler guard that ends a hung process, and plans whose
structures share their children (61 lists hold 2**60 paths)."""

from __future__ import annotations

import faulthandler
import threading
import time
from contextlib import contextmanager

from murgat_local.generate.program import Evidence, Span

# A hung plan holds the GIL without end; these bounds sit far above what a loaded 2-core machine's
# scheduler adds to a 10 ms tick, and far below a hang.
GAP_S = 2.0
MARGIN_S = 3.0


class Tools:
    def __init__(self) -> None:
        self.received: list[int] = []

    def find(self, description, modality):
        return [Span(1, 2)]

    def query(self, time, question, modality):
        return Evidence("seen", str(time), modality)

    def answer(self, question, evidence, options):
        self.received.append(len(question) + sum(len(x) for x in evidence if isinstance(x, str)))
        return "B"


class Watcher:
    """Ticks every 10 ms in its own thread; `gap` is the longest time it could not run."""

    def __init__(self) -> None:
        self.gap = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            time.sleep(0.01)
            now = time.monotonic()
            self.gap = max(self.gap, now - last)
            last = now

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def hang_guard(seconds: float = 120.0):
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# Two structures equal in shape but distinct, each sharing its children: 61 lists hold 2**60 paths.
SHARED = "x = [1]\nw = [1]\nfor i in range(60):\n    x = [x, x]\n    w = [w, w]\n"

SHARED_TUPLE = "x = (1,)\nfor i in range(60):\n    x = (x, x)\n"
