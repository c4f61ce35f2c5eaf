"""What a resumed run must give back, checked on the verdict cache itself.

vLLM on the CPU does not promise the same greedy output for the same batch whatever the engine
ran before (measured here: the same 8 prompts in the same batches give 1 different output after
other requests than on a fresh engine, and zeroing the KV cache does not change that). So a
resumed run is held to what the pipeline controls:
- every verdict cached before the interruption was computed exactly as the uninterrupted run
  computed it (same engine history up to that point), and comes back unchanged;
- a verdict may differ from the uninterrupted run's only if it was computed after the resume;
- the records have the same responses, in the same order, with the same sentences and citations.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3


def cache_rows(db: pathlib.Path) -> dict[str, tuple]:
    with sqlite3.connect(db, timeout=30) as c:
        return {
            r[0]: r[1:]
            for r in c.execute("SELECT key, stage, status, verdict, raw, reason FROM verdicts")
        }


def check_verdicts(before: dict, uninterrupted: dict, after: dict) -> int:
    """Assert the rules above on three snapshots of a cache; returns how many verdicts differ
    from the uninterrupted run's (all computed after the resume)."""
    assert before, "nothing was cached before the interruption"
    for key, row in before.items():
        assert uninterrupted.get(key) == row, (
            f"verdict {key[:12]} cached before the interruption differs"
        )
        assert after.get(key) == row, f"verdict {key[:12]} changed when the run resumed"
    differ = [k for k in set(after) & set(uninterrupted) if after[k] != uninterrupted[k]]
    assert not set(differ) & set(before)
    return len(differ)


def structure(records_path: pathlib.Path) -> list:
    """Each record's id, status and sentences with their citations: what does not depend on any
    model output (the original sentence text, not the decontextualized one)."""
    out = []
    for line in records_path.read_text().splitlines():
        r = json.loads(line)
        sents = [
            (s["text"], [c["raw"] for c in s.get("citations", [])])
            for s in (r.get("trace") or {}).get("sentences", [])
        ]
        out.append((r["id"], r["status"], sents))
    return out


def first_rows(
    proc,
    db: pathlib.Path,
    stage: str | None = None,
    timeout: float = 600,
    poll: float = 0.5,
    more_than: int = 0,
) -> int | None:
    """Wait while `proc` runs until the cache at `db` holds more than `more_than` verdicts (of
    `stage`, if given); the number of rows then, or None when the process ended (or the time ran
    out) first."""
    import time

    where = "" if stage is None else f" WHERE stage='{stage}'"
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        time.sleep(poll)
        if not db.exists():
            continue
        try:
            with sqlite3.connect(db, timeout=1) as c:
                n = c.execute(f"SELECT COUNT(*) FROM verdicts{where}").fetchone()[0]
        except sqlite3.Error:
            continue
        if n > more_than:
            return n
    return None


def group_survivors(pgid: int, within_s: float = 30.0) -> list[str]:
    """The processes of group `pgid` still running after up to `within_s` seconds (empty once
    the whole group has ended), each as 'pid cmdline' so a failure says what was left."""
    import time

    import psutil  # type: ignore[import-untyped]  # no types shipped; types-psutil is not locked

    deadline = time.time() + within_s
    while True:
        left = []
        for p in psutil.process_iter(["pid", "cmdline"]):
            try:
                if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{p.pid} {' '.join(p.info['cmdline'] or [])[:200]}")
            except (ProcessLookupError, psutil.Error):
                continue
        if not left or time.time() >= deadline:
            return left
        time.sleep(0.5)
