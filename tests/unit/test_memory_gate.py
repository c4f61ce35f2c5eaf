"""The wait for room in memory before an end-to-end module on two workers, on a scripted clock and
meter, and the lock that keeps two memory-heavy modules apart (tests/support/memory_gate.py)."""

from __future__ import annotations

from support.memory_gate import one_at_a_time, wait_for_room


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


def _held_elsewhere(path):
    """An open file holding `path`'s lock, as the other worker's would (flock: per open file)."""
    import fcntl

    f = open(path, "a")
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return f


def _free(path) -> bool:
    import fcntl

    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def test_a_free_lock_is_taken_at_once_and_held_for_the_body(tmp_path):
    lock = tmp_path / "run" / "heavy.lock"
    with one_at_a_time(lock, timeout_s=60, sleep=lambda s: None) as waited:
        assert waited == 0 and not _free(lock)
    assert _free(lock)


def test_a_held_lock_is_waited_for_until_its_holder_lets_go(tmp_path):
    lock = tmp_path / "heavy.lock"
    other, slept = _held_elsewhere(lock), []

    def sleep(s):
        slept.append(s)
        if len(slept) == 3:
            other.close()  # the other worker's module ends

    with one_at_a_time(lock, timeout_s=60, sleep=sleep, poll_s=2) as waited:
        assert waited == 6 and not _free(lock)
    assert _free(lock)


def test_past_the_timeout_the_body_runs_without_the_lock(tmp_path):
    lock = tmp_path / "heavy.lock"
    other = _held_elsewhere(lock)
    with one_at_a_time(lock, timeout_s=4, sleep=lambda s: None, poll_s=2) as waited:
        assert waited == 4
    assert not _free(lock)  # still the other's, untouched
    other.close()
