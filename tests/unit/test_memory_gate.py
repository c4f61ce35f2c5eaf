"""The wait for room in memory before an end-to-end module or test on two workers
(tests/support/memory_gate.py), on a scripted clock and meter."""

from __future__ import annotations

from support.memory_gate import wait_for_room


def meter(readings):
    it = iter(readings)
    last = [None]

    def available():
        last[0] = next(it, last[0])
        return last[0]

    return available


def test_enough_room_waits_for_nothing_and_frees_nothing():
    freed = []
    waited = wait_for_room(6, 60, free_first=lambda: freed.append(1), available=meter([10.0]))
    assert waited == 0 and freed == []


def test_short_of_room_frees_once_then_waits_until_there_is_room():
    freed, slept = [], []
    waited = wait_for_room(
        6,
        60,
        free_first=lambda: freed.append(1),
        available=meter([2.0, 3.0, 4.0, 7.0]),
        sleep=slept.append,
        poll_s=2,
    )
    assert freed == [1] and slept == [2, 2] and waited == 4


def test_past_the_timeout_it_goes_on():
    slept = []
    waited = wait_for_room(6, 5, available=meter([1.0]), sleep=slept.append, poll_s=2)
    assert waited == 6 and slept == [2, 2, 2]
