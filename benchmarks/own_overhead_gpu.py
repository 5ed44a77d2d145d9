"""Where graphscope's eager overhead on the seeds' benchmark goes (GPU): the plain CuPy loop against the same
loop with each of ctx.launcher's differences added one at a time, and graphscope's own measurement.

    python benchmarks/own_overhead_gpu.py [--rounds 5]

Variants (1000 vec_add launches a step, median GPU time by CUDA events, interleaved blocks of 5 steps):
plain `kernel(grid, block, args, stream=s)`; `+ shared_mem=0`; `+ closure` (a wrapper taking *args and
calling through a tuple cell, as ctx.launcher's fast path does); `+ with stream` (the step inside `with
stream:` as the runner runs it); graphscope (LiveWorkload.measure('eager')). Prints each one's ratio to plain.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import cupy as cp

    from benchmarks.plain_cupy_seed import SOURCE
    from graphscope.workload.child.live import LiveWorkload

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    n = 1 << 14
    kernel = cp.RawKernel(SOURCE, "vec_add")
    a, b = cp.random.rand(n, dtype=cp.float32), cp.random.rand(n, dtype=cp.float32)
    c = cp.empty_like(a)
    stream = cp.cuda.Stream(non_blocking=True)
    n32, grid, block = np.int32(n), (n // 256,), (256,)
    cell = [(kernel, grid, block, 0)]

    def closure(*args):
        fast = cell[0]
        fast[0](fast[1], fast[2], args, shared_mem=fast[3], stream=stream)

    def plain():
        for _ in range(1000):
            kernel(grid, block, (a, b, c, n32), stream=stream)

    def shared():
        for _ in range(1000):
            kernel(grid, block, (a, b, c, n32), shared_mem=0, stream=stream)

    def wrapped():
        for _ in range(1000):
            closure(a, b, c, n32)

    def within():
        with stream:
            for _ in range(1000):
                closure(a, b, c, n32)

    live = LiveWorkload(ROOT / "examples" / "seed_vecadd.py")
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def timed(step) -> float:
        times = []
        for _ in range(5):
            start.record(stream)
            step()
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e6)
        return float(np.median(times))

    variants = {"plain": plain, "shared_mem": shared, "closure": wrapped, "with_stream": within}
    for step in variants.values():
        step()
    stream.synchronize()
    results: dict[str, list[float]] = {name: [] for name in [*variants, "graphscope"]}
    for _ in range(rounds):
        for _ in range(6):
            for name, step in variants.items():
                results[name].append(timed(step))
            results["graphscope"].append(float(np.median(live.measure("eager", 5, 1)["gpu_ns"])))
    plain_median = float(np.median(results["plain"]))
    summary = {name: {"median_ns": float(np.median(v)), "ratio": float(np.median(v)) / plain_median}
               for name, v in results.items()}  # fmt: skip
    summary["own_cost"] = live.fw.own_cost()
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
