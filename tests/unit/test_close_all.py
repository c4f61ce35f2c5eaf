"""Closing a run's engines: all at once, each once, and no error lost (pure logic, fakes)."""

from __future__ import annotations

import threading

import pytest

from murgat_local.engines import close_all


class Slow:
    """Closes only when every other holder is closing too (a barrier): closing one after
    another would time the barrier out."""

    def __init__(self, barrier, fail=None):
        self.barrier, self.fail, self.closed = barrier, fail, 0

    def close(self):
        self.barrier.wait(timeout=5)
        self.closed += 1
        if self.fail:
            raise self.fail


def test_engines_are_closed_at_the_same_time_and_each_once():
    barrier = threading.Barrier(3)
    holders = [Slow(barrier) for _ in range(3)]
    close_all([*holders, holders[0]])  # the same holder under two names closes once
    assert [h.closed for h in holders] == [1, 1, 1]
    assert not barrier.broken


def test_an_error_is_raised_after_every_engine_was_closed():
    barrier = threading.Barrier(3)
    holders = [Slow(barrier), Slow(barrier, fail=RuntimeError("worker gone")), Slow(barrier)]
    with pytest.raises(RuntimeError, match="worker gone"):
        close_all(holders)
    assert [h.closed for h in holders] == [1, 1, 1]


def test_nothing_or_one_closes_in_place():
    close_all([])
    one = Slow(threading.Barrier(1))
    close_all({"m": one}.values())
    assert one.closed == 1
