"""The Ray engine on a real two-node Ray cluster (`ray.cluster_utils.Cluster`, CPU): attribution
of the sample runs through Ray Data LLM with one vLLM replica per node, the cited segments
travelling as `SegmentRef`s and cut on the workers, and gives the in-process engine's records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.cli import JUDGES
from support.paths import ROOT, require_model

from murgat_local.media.segments import SegmentCutter, SegmentRef
from murgat_local.text.citations import parse_citations

ray = pytest.importorskip("ray")

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.memory_heavy("a two-node Ray cluster: two vLLM replicas, a scorer and its engines"),
]


# Own engines: a two-node Ray cluster whose actors start the engines under test.
@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 3, "resources": {"vllm_slot": 1}})
    c.add_node(num_cpus=3, resources={"vllm_slot": 1})
    yield c
    c.shutdown()


def _without_p_yes(path) -> tuple[list, list[float]]:
    """The records with every `p_yes` taken out, and those values in the order met."""
    found: list[float] = []

    def strip(node):
        if isinstance(node, dict):
            if isinstance(node.get("p_yes"), float):
                found.append(node["p_yes"])
            return {k: strip(v) for k, v in node.items() if k != "p_yes"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    rows = [strip(json.loads(line)) for line in path.read_text().splitlines()]
    return rows, found


def test_the_sample_scores_on_a_two_node_cluster_as_in_process(cluster, media_root, tmp_path):
    for m in ("tiny-qwen3-omni", "smollm2-135m-instruct"):
        require_model(m)
    env = dict(os.environ, COLUMNS="200")

    def score(out, *extra):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "murgat_local.cli",
                "score",
                str(ROOT / "samples/responses.jsonl"),
                "--media-root",
                str(media_root),
                "--out",
                str(out),
                *JUDGES,
                *map(str, extra),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )

    cfg = tmp_path / "ray.toml"
    # Attribution on the cluster, one replica per node (each node has one "vllm_slot"); the
    # stage's whole batch in one Ray Data job.
    cfg.write_text(
        f'batch_size = 100000\n[stage_engines.entail]\nengine = "ray"\n'
        f'[ray]\naddress = "{cluster.address}"\nreplicas = 2\n'
        f"replica_resources = {{ CPU = 1, vllm_slot = 1 }}\nrows_per_batch = 4\n"
    )
    on_ray = score(tmp_path / "ray", "--config", cfg)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert (
        summary["stages"]["entail"]["model_calls"] > 0
        and summary["stages"]["entail"]["errors"] == 0
    )
    # Attribution again, in-process, on the same text-stage verdicts (the SmolLM2 stages are
    # not what is compared, and vLLM on the CPU does not promise the same text twice).
    import sqlite3

    (tmp_path / "local").mkdir()
    with (
        sqlite3.connect(tmp_path / "ray" / "verdicts.sqlite") as src,
        sqlite3.connect(tmp_path / "local" / "verdicts.sqlite") as dst,
    ):
        src.backup(dst)
        dst.execute("DELETE FROM verdicts WHERE stage = 'entail'")
    same = tmp_path / "local.toml"
    same.write_text("batch_size = 100000\n")
    local = score(tmp_path / "local", "--config", same)
    assert local.returncode == 0, local.stderr[-3000:]
    again = json.loads((tmp_path / "local" / "summary.json").read_text())["stages"]["entail"]
    assert again["model_calls"] == summary["stages"]["entail"]["model_calls"]
    # The same records, verdict for verdict; p_yes within float noise (two vLLM engines in
    # other processes, other threads: their log-probabilities differ in the last bits).
    ray_rows, ray_p = _without_p_yes(tmp_path / "ray" / "scores.jsonl")
    local_rows, local_p = _without_p_yes(tmp_path / "local" / "scores.jsonl")
    assert ray_rows == local_rows
    assert len(ray_p) == len(local_p) > 0
    assert max(abs(a - b) for a, b in zip(ray_p, local_p)) < 0.02, (ray_p, local_p)
    # Same identity: the same attribution keys either way.
    with (
        sqlite3.connect(tmp_path / "ray" / "verdicts.sqlite") as a,
        sqlite3.connect(tmp_path / "local" / "verdicts.sqlite") as b,
    ):
        q = "SELECT key FROM verdicts WHERE stage = 'entail' ORDER BY key"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()


def test_requests_are_fitted_on_the_cluster_as_in_process(cluster, media_root):
    """Media the driver holds are fitted there; a segment reference is fitted on the worker,
    after its cut: the same notes and refusals as the in-process engine either way."""
    from support.engine_checks import CLAIM, check_fitted, fitting_requests

    from murgat_local.engines import Request, load_preset
    from murgat_local.engines.limits import RequestFitter
    from murgat_local.engines.ray import RayEngine
    from murgat_local.engines.render import ChatRenderer
    from murgat_local.judges import YesNo
    from murgat_local.media.segments import SegmentOptions

    require_model("tiny-qwen3-omni")
    preset = load_preset("tiny-qwen3-omni")
    opts = SegmentOptions(fps=8, max_frames=64)  # 58 frames of a 7 s range: past the context
    cutter = SegmentCutter(media_root, opts)
    source = cutter.source("colors")
    ref = SegmentRef(source, parse_citations("(visual, 0:00-0:07)")[0], opts)
    held = Request(CLAIM, YesNo, media=(cutter.cut(source, ref.citation),))
    engine = RayEngine(
        preset,
        address=cluster.address,
        replicas=1,
        replica_resources={"CPU": 1, "vllm_slot": 1},
        rows_per_batch=4,
    )
    try:
        *fitted, by_ref = engine.judge([*fitting_requests(), Request(CLAIM, YesNo, media=(ref,))])
    finally:
        engine.close()
    check_fitted(fitted)
    here = RequestFitter(preset, engine._args, ChatRenderer(preset.path, preset)).fit(held)
    assert here.note == "frames reduced from 58 to 30 to fit max_model_len"
    assert by_ref.ok and by_ref.note == here.note, by_ref


def test_no_address_starts_a_local_ray_even_beside_a_cluster_on_the_machine(cluster, monkeypatch):
    """`[ray]` without an address starts a Ray of the run's own, as documented, though another
    Ray runs on this machine and RAY_ADDRESS names it (Ray's `ray.init()` would join it and then
    refuse the local Ray's resources); it stops with the engine, and the cluster goes on."""
    from murgat_local.engines import load_preset
    from murgat_local.engines.ray import RayEngine

    require_model("smollm2-135m-instruct")
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    engine = RayEngine(load_preset("smollm2-135m-instruct"), local_cpus=4)
    try:
        assert ray.get_runtime_context().gcs_address != cluster.address
        nodes = [n for n in ray.nodes() if n["Alive"]]
        assert len(nodes) == 1 and nodes[0]["Resources"]["CPU"] == 4, nodes
        assert "vllm_slot" not in nodes[0]["Resources"]  # not a node of the cluster
    finally:
        engine.close()
    assert not ray.is_initialized()
    assert len(cluster.list_all_nodes()) == 2 and all(
        n.any_processes_alive() for n in cluster.list_all_nodes()
    )
