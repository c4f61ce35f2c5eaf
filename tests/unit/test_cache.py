import threading

from support.cache_rows import row

from murgat_local.pipeline.cache import VerdictCache, make_key


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
