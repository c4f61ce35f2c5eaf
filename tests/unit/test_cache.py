import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

from murgat_local.pipeline.cache import CachedVerdict, VerdictCache, make_key


def row(i):
    return (
        make_key({"i": i}),
        "entail",
        "judge-x",
        CachedVerdict("ok", '{"label":"YES"}', '{"label":"YES"}', None, 10, 3),
    )


def test_put_get_roundtrip(tmp_path):
    c = VerdictCache(tmp_path / "c.sqlite")
    c.put_many([row(i) for i in range(10)])
    got = c.get_many([make_key({"i": i}) for i in range(12)])
    assert len(got) == 10 and got[make_key({"i": 3})].status == "ok"
    assert c.count("entail") == 10 and c.count("verifiable") == 0


def test_concurrent_readers_while_writing(tmp_path):
    path = tmp_path / "c.sqlite"
    writer = VerdictCache(path)
    errors = []

    def read():
        reader = VerdictCache(path)
        try:
            for _ in range(50):
                reader.get_many([make_key({"i": i}) for i in range(100)])
        except Exception as e:  # pragma: no cover - the failure we look for
            errors.append(e)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for k in range(20):
        writer.put_many([row(k * 5 + j) for j in range(5)])
    for t in threads:
        t.join()
    assert not errors and writer.count() == 100


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
