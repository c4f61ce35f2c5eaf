"""What operations on plan values cost, measured before they run, and the byte pool of a run.

A plan can build values that share their children: `x = [x, x]` sixty times is 61 small lists
holding 2**60 paths. Python's own comparison, hashing, ordering and membership walk every path in
C, holding the GIL, so no check between steps could stop them. Here the cost of such an operation
is the size of its operands with sharing expanded (a child reached twice counts twice), walked
iteratively up to what the plan may still spend, with the clock checked during the walk. Only an
operation whose cost fits is handed to Python.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .limits import ProgramStop
from .tools import Evidence, Span

CONTAINERS = (list, tuple, dict)
_END = object()
_TICK = 4096  # elements walked between two clock checks
_CHARS_PER_UNIT = 64  # a string costs one unit per 64 characters (memcmp / hashing speed)


class TooDeep(Exception):
    """A value nested deeper than the walk may go (a cycle reaches it too)."""


def expanded_size(value: Any, cap: int, max_depth: int, tick: Callable[[], None]) -> int:
    """Elements an operation over `value` may visit, shared children counted each time they are
    reached; stops as soon as the count passes `cap`. The walk holds one iterator per level, so
    its own memory is bounded by `max_depth` (deeper, or cyclic: `TooDeep`)."""
    count = 0
    stack: list[Iterator[Any]] = [iter((value,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        count += 1 + len(item) // _CHARS_PER_UNIT if isinstance(item, str) else 1
        if count > cap:
            return count
        if count % _TICK == 0:
            tick()
        if isinstance(item, CONTAINERS) and item:
            if len(stack) > max_depth:
                raise TooDeep()
            stack.append(
                itertools.chain(item.keys(), item.values())
                if isinstance(item, dict)
                else iter(item)
            )
    return count


def text_size(values: tuple) -> int:
    """Characters a tool receives: strings, evidence text and span text, inside lists too."""
    total = 0
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Evidence):
            total += len(item.text)
        elif isinstance(item, Span):
            total += len(item.text)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return total


class RunBudget:
    """The bytes all plans of one run may hold together.

    Each plan may build `per_plan` bytes; a run starts at most `concurrent` plans at once, so the
    plans alive together never exceed `max_bytes` and no plan's spending can stop another. The
    pool also counts what live plans have built (`in_use`), released when each plan ends; a caller
    that ran more plans at once than `concurrent` would see them stopped here, not the process.
    """

    def __init__(self, max_bytes: int, per_plan: int) -> None:
        if max_bytes <= 0 or per_plan <= 0:
            raise ValueError("RunBudget sizes must be positive")
        self.max_bytes = max_bytes
        self.per_plan = per_plan
        self.concurrent = max(1, max_bytes // per_plan)
        self.in_use = 0
        self._lock = threading.Lock()

    def take(self, size: int, stop: Callable[[], ProgramStop]) -> None:
        with self._lock:
            if self.in_use + size > self.max_bytes:
                raise stop()
            self.in_use += size

    def give_back(self, size: int) -> None:
        with self._lock:
            self.in_use = max(0, self.in_use - size)
