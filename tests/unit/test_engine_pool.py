"""The tests' engine pool (support/engine_pool.py), on fake engines: one engine per key, the
least recently used closed past the limit, every engine closed at the end."""

from __future__ import annotations

import pytest
from support import engine_pool
from support.engine_pool import EnginePool


class Fake:
    def __init__(self, preset, **options):
        self.name, self.options, self.closed = preset, options, False

    def close(self):
        self.closed = True


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setattr(engine_pool, "require_model", lambda name: None)
    monkeypatch.setattr(engine_pool, "load_preset", lambda name: name)
    monkeypatch.setattr(engine_pool, "make_engine", lambda kind, preset, **o: Fake(preset, **o))
    return EnginePool({"vllm": 2}, available=lambda: 100.0)


def test_the_same_key_gets_the_same_engine_and_other_options_another(pool):
    a = pool.get("m1")
    assert pool.get("m1", "vllm") is a
    assert pool.get("m1", seed=1) is not a and pool.get("m1", seed=1) is pool.get("m1", seed=1)
    assert pool.get("m1", "transformers") is not a  # another kind: its own limit


def test_past_the_limit_the_least_recently_used_is_closed_and_restarts_when_asked(pool):
    a, b = pool.get("m1"), pool.get("m2")
    pool.get("m1")  # m2 is now the least recently used
    c = pool.get("m3")
    assert b.closed and not a.closed and not c.closed
    b2 = pool.get("m2")
    assert b2 is not b and a.closed  # m1 was the least recently used then
    assert [m for _, m, _ in pool.started] == ["m1", "m2", "m3", "m2"]


def test_close_closes_every_open_engine(pool):
    engines = [pool.get("m1"), pool.get("m2"), pool.get("m1", "transformers")]
    pool.close()
    assert all(e.closed for e in engines)
    assert pool.get("m1") is not engines[0]  # the pool can be used again


def test_short_of_memory_idle_engines_close_least_recently_used_first(monkeypatch):
    free = [20.0]  # GiB available; each engine closed gives back 3

    class Sized(Fake):
        def close(self):
            self.closed = True
            free[0] += 3

    monkeypatch.setattr(engine_pool, "require_model", lambda name: None)
    monkeypatch.setattr(engine_pool, "load_preset", lambda name: name)
    monkeypatch.setattr(engine_pool, "make_engine", lambda kind, preset, **o: Sized(preset, **o))
    pool = EnginePool({"vllm": 4}, available=lambda: free[0], min_available_gib=8)
    a, b = pool.get("m1"), pool.get("m2")
    pool.get("m1")  # m2 is now the least recently used
    free[0] = 5.0  # another worker's engines took the room
    c = pool.get("m3")
    assert b.closed and not a.closed and not c.closed  # 5 + 3 GiB back: m1 stays
    free[0] = 1.0
    d = pool.get("m4")
    assert a.closed and c.closed and not d.closed  # every idle engine, and still it starts
    assert [m for _, m, _ in pool.started] == ["m1", "m2", "m3", "m4"]
