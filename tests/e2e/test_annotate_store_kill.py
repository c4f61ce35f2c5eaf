"""The annotation store survives a SIGKILL of the process writing it (a real child process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support.paths import ROOT

from murgat_local.annotate import Store

STORE_WRITER = """
import sys
from murgat_local.annotate.store import Store
s = Store(sys.argv[1])
for k in range(100000):
    s.add("ann", f"r{k // 10}", "d", f"s{k % 10 + 1}.verifiable", k % 3 == 0, False)
    print(k, flush=True)
"""


def test_every_acknowledged_answer_survives_a_sigkill(tmp_path):
    db = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", STORE_WRITER, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    acked = -1
    for line in proc.stdout:
        acked = int(line)
        if acked >= 300:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = Store(db)
    rows = [(a.response, a.question) for a in store.answers("ann")]
    # every answer the writer reported is there, in order; at most the one in flight beyond
    want = [(f"r{k // 10}", f"s{k % 10 + 1}.verifiable") for k in range(acked + 1)]
    assert rows[: acked + 1] == want and len(rows) - (acked + 1) in (0, 1, 2)
    seq, live = store.add(
        "ann", "r0", "d", "s1.verifiable", False, False
    )  # answered already: the first stays
    assert live is True
    undone = store.undo_last("ann")
    assert store.count("ann") == len(rows) - 1 and undone.question == rows[-1][1]
    store.add("ann", undone.response, "d", undone.question, "unsure", False)  # answerable again
    assert store.count("ann") == len(rows)
    store.close()
