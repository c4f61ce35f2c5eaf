"""Model folders without a preset on vLLM's CPU build, for real: two of them start side by side.

There `gpu_memory_utilization` is the share of the machine's memory an engine reserves and must
find free when it starts; a folder engine that asked for vLLM's GPU default (0.92) left none
for a second one. `VLLM_CPU_KVCACHE_SPACE` or a preset's `kv_cache_memory_bytes` sizes the cache
instead and skips that check: a folder has neither, and the engines here run without the variable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support.paths import ROOT, require_model

pytestmark = [pytest.mark.engine, pytest.mark.slow]

SIDE_BY_SIDE = """
import json, sys
from murgat_local import offline
offline.enforce()
if __name__ == "__main__":
    from murgat_local.engines import JudgeRequest, load_preset, make_engine
    from murgat_local.judges.verdicts import YesNo
    engines = []
    try:
        for folder in sys.argv[1:]:  # both stay up while the next one starts
            engines.append(make_engine("vllm", load_preset(folder)))
        ask = JudgeRequest("Claim: the sky is blue.", YesNo, "Answer YES or NO.")
        out = [{"share": e._engine_args["gpu_memory_utilization"], "error": r.error, "ok": r.ok}
               for e in engines for r in e.judge([ask])]
    finally:
        for e in engines:
            e.close()
    print("RESULT " + json.dumps(out))
"""


def test_two_model_folders_start_side_by_side_on_vllms_cpu_build(tmp_path):
    folders = []
    for name in ("first-copy", "second-copy"):
        shutil.copytree(require_model("tiny-qwen3-vl"), tmp_path / name)
        folders.append(str(tmp_path / name))
    (tmp_path / "side_by_side.py").write_text(SIDE_BY_SIDE)
    env = {k: v for k, v in os.environ.items() if k != "VLLM_CPU_KVCACHE_SPACE"}
    env["VLLM_LOGGING_LEVEL"] = "INFO"  # a worker that refuses to start says why only there
    proc = subprocess.run(
        ["timeout", "-k", "10", "420", sys.executable, str(tmp_path / "side_by_side.py"), *folders],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    why = [l for l in (proc.stdout + proc.stderr).splitlines() if "Available memory" in l]
    assert proc.returncode == 0, why or proc.stderr[-3000:]
    (line,) = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    results = json.loads(line.removeprefix("RESULT "))
    assert len(results) == 2 and all(r["ok"] and r["error"] is None for r in results), results
    assert all(r["share"] < 0.2 for r in results), results
