"""Time reading the paper's benchmarks as downloaded: a 3,000-question WorldSense file and a
900-row Video-MMMU set (300 per track, each Adaptation row with its PNG), against the 1 s goal.

Each read is the whole of `open_dataset(PATH).items()` (format detection, parsing, validation,
categories; no video is opened). Printed side by side: the reader's time, a bare `json.load` /
`pyarrow` read of the same files (the floor), and the ratio to the goal. Asserts nothing.
Usage:
    python scripts/bench_datasets.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import tempfile
import time

import pyarrow.parquet as pq

from murgat_local.inputs.benchmarks import open_dataset
from murgat_local.sample import benchmarks as layouts

GOAL_S = 1.0


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        ws = layouts.worldsense_official(root / "ws", None, videos=1500, tasks=2, bad=False)
        vm = layouts.videommmu(root / "vm", None, per_track=300, bad=False, shards=2)
        cases = [
            (
                "WorldSense (worldsense_qa.json)",
                ws,
                lambda: json.loads((ws / "worldsense_qa.json").read_text()),
            ),
            (
                "Video-MMMU (3 tracks, parquet)",
                vm,
                lambda: [
                    pq.read_table(p).to_pylist()
                    for p in sorted(vm.glob("*/*.parquet"))
                    if not p.name.startswith("._")
                ],
            ),
        ]
        print(
            f"{'benchmark':34} {'questions':>9} {'read s':>8} {'floor s':>8} {'q/s':>9} {'goal ratio':>10}"
        )
        for name, path, floor in cases:
            n = sum(1 for _ in open_dataset(path).items())
            took = best(lambda path=path: sum(1 for _ in open_dataset(path).items()), args.repeat)
            base = best(floor, args.repeat)
            print(f"{name:34} {n:9d} {took:8.3f} {base:8.3f} {n / took:9.0f} {took / GOAL_S:10.2f}")


if __name__ == "__main__":
    main()
