"""A process killed mid-write does not poison the cache (a real child process)."""

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

from support.cache_rows import row

from murgat_local.pipeline.cache import VerdictCache

WRITER = textwrap.dedent(
    """
    import sys
    from murgat_local.pipeline.cache import CachedVerdict, VerdictCache, make_key
    c = VerdictCache(sys.argv[1])
    batch = 0
    print("ready", flush=True)
    while True:
        rows = [(make_key({"b": batch, "j": j}), "entail", "j", CachedVerdict("ok", "v", "r" * 200, None, 1, 1))
                for j in range(1000)]
        c.put_many(rows)
        batch += 1
    """
)


def test_a_crash_mid_write_does_not_poison_the_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(1.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    assert n > 0 and n % 1000 == 0  # whole transactions only
    assert (
        conn.execute(
            "SELECT COUNT(*) FROM verdicts WHERE raw IS NULL OR verdict IS NULL"
        ).fetchone()[0]
        == 0
    )
    VerdictCache(path).put_many([row(1)])  # still writable
