"""Many synchronous programs, one batched engine: their model calls gathered into rounds.

Each program-aided item runs its plan in its own thread; a tool call blocks that thread until
its outcome comes back. The coordinator waits until every live program is blocked on a call
(or finished), then sends all the waiting calls as one batch, in item order, and hands the
outcomes back. Which calls share a round depends only on the programs, not on thread timing,
so a resumed run sends the same rounds (the cached ones are served without the engine).

At most `max_live` programs run at once (each plan may hold its whole byte budget, and the run's
pool is `max_live` of those); the next ones start, in item order, at the moment a round would
form, so which calls share a round still depends only on the programs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from ..judges.calls import Call, Outcome

T = TypeVar("T")
Ask = Callable[[Sequence[Call]], list[Outcome]]


class RoundBatcher(Generic[T]):
    def __init__(self, send: Callable[[list[Call]], list[Outcome]], max_live: int | None = None):
        if max_live is not None and max_live < 1:
            raise ValueError("max_live must be at least 1")
        self._send = send
        self._max_live = max_live
        self._cond = threading.Condition()
        self._waiting: dict[int, list[Call]] = {}
        self._answers: dict[int, list[Outcome] | BaseException] = {}
        self._alive = 0
        self.rounds = 0
        self.calls = 0

    def _asker(self, i: int) -> Ask:
        def ask(calls: Sequence[Call]) -> list[Outcome]:
            if not calls:
                return []
            with self._cond:
                self._waiting[i] = list(calls)
                self._cond.notify_all()
                while i not in self._answers:
                    self._cond.wait()
                got = self._answers.pop(i)
            if isinstance(got, BaseException):
                raise got
            return got

        return ask

    def run(self, jobs: Sequence[Callable[[Ask], T]]) -> list[T | BaseException]:
        """Run every job to its end; a job's exception is returned in its place."""
        results: dict[int, T | BaseException] = {}

        def work(i: int, job: Callable[[Ask], T]) -> None:
            try:
                results[i] = job(self._asker(i))
            except BaseException as e:  # kept as that job's outcome
                results[i] = e
            finally:
                with self._cond:
                    self._alive -= 1
                    self._cond.notify_all()

        threads = [
            threading.Thread(target=work, args=(i, job), daemon=True, name=f"program-{i}")
            for i, job in enumerate(jobs)
        ]
        cap = len(threads) if self._max_live is None else self._max_live
        started = 0

        def start_more() -> bool:  # under the lock
            nonlocal started
            more = False
            while started < len(threads) and self._alive < cap:
                self._alive += 1
                threads[started].start()
                started += 1
                more = True
            return more

        self._alive = 0
        with self._cond:
            start_more()
        failure: BaseException | None = None
        while True:
            with self._cond:
                while True:
                    while self._alive and len(self._waiting) < self._alive:
                        self._cond.wait()
                    if not start_more():
                        break
                if not self._waiting:
                    break
                batch = sorted(self._waiting.items())
                self._waiting.clear()
            flat = [c for _, calls in batch for c in calls]
            try:
                outcomes = self._send(flat) if failure is None else None
            except BaseException as e:  # the engine failed: every waiting program stops with it
                failure, outcomes = e, None
            self.rounds += 1
            self.calls += len(flat)
            with self._cond:
                at = 0
                for i, calls in batch:
                    if outcomes is None:
                        self._answers[i] = failure or RuntimeError("no outcome")
                    else:
                        self._answers[i] = outcomes[at : at + len(calls)]
                    at += len(calls)
                self._cond.notify_all()
        for t in threads[:started]:
            t.join()
        if failure is not None:
            raise failure
        return [results[i] for i in range(len(jobs))]
