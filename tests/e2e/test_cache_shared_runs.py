"""Two `murgat score` processes sharing one cache at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

from support.cache_runs import _records, _responses, _run
from support.paths import ROOT

SHARED = textwrap.dedent("""
    import json, pathlib, sys, time
    sys.path.insert(0, sys.argv[4])
    from support.fakes import OracleEngine
    from murgat_local.config import RunConfig
    from murgat_local.pipeline.runner import Runner
    from murgat_local.metrics.run_summary import RunSummary

    class Slow(OracleEngine):
        def judge(self, requests):
            time.sleep(0.05)
            return super().judge(requests)

    runner = Runner(RunConfig(judge="oracle", cache=sys.argv[3], batch_size=3, decontextualize=False),
                    pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), engines={"oracle": Slow()}, summary=RunSummary)
    runner.run(pathlib.Path(sys.argv[5]))
    runner.close()
""")


def test_two_runs_sharing_one_cache_at_once_both_finish_with_the_records_of_separate_runs(
    tmp_path, media_root
):
    responses = _responses(tmp_path, 16)
    alone = _run(tmp_path, media_root, responses, tmp_path / "alone")
    shared = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                SHARED,
                str(media_root),
                str(tmp_path / f"run{i}"),
                str(shared),
                str(ROOT / "tests"),
                str(responses),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        _, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr[-2000:]
    for i in range(2):
        assert (tmp_path / f"run{i}" / "scores.jsonl").read_bytes() == _records(alone)
    assert sqlite3.connect(shared).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
