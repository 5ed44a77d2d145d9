"""A job's rank traces analysed on Dask's local cluster against a serial loop (fresh processes).

Rank sets are generated with tests/synthetic_ranks.py (PyTorch-profiler JSON as torch.profiler writes
it, a planted straggler): N ranks of about E events each. The local cluster has one single-threaded
worker process per core; the serial loop reads the same ranks one after another in one process (the
same per-rank work, rank_rows). Reported: wall time of each (start-up included), peak resident memory
per process (each worker's, the loop's), and the speed-up with the cores this machine has.

    python benchmarks/ranks.py [--sets 8x250000,64x50000,256x10000]
    python benchmarks/ranks.py --format nsys --sets 64x1000000,256x1000000

With `--format nsys` each rank is an Nsight Systems export made by benchmarks/synthetic_export.py (half
kernels, half CUDA API rows: EVENTS in all), one file copied to rank0.sqlite, rank1.sqlite, ... (its rank
from its name; no straggler planted: the skew is zero).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


SERIAL = """
import json, resource, sys, time
from pathlib import Path
from graphscope.ranks.job import analyse_serially
t0 = time.perf_counter()
job = analyse_serially([Path(sys.argv[1])])
print(json.dumps({"seconds": time.perf_counter() - t0, "verdict": job["verdict"],
                  "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""
CLUSTER = """
import json, resource, sys, time
from pathlib import Path
from graphscope.ranks.job import analyse_job, client_for
import graphscope.ranks.job as job_module
peaks = []
real = job_module.client_for
def spying(scheduler, workers):
    client = real(scheduler, workers)
    original = client.close
    def close(*args, **kwargs):
        peaks.extend(client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20).values())
        original(*args, **kwargs)
    client.close = close
    return client
job_module.client_for = spying
t0 = time.perf_counter()
job = analyse_job([Path(sys.argv[1])])
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"seconds": time.perf_counter() - t0, "verdict": job["verdict"], "workers": job["engine"]["workers"],
                  "peak_gib": max(peaks), "scheduler_peak_gib": own}))
"""


def run(code: str, folder: Path) -> dict:
    """A fresh process (the file reads not cached, so both sides read every rank from its file)."""
    env = {**os.environ, "GRAPHSCOPE_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def nsys_set(ranks: int, events: int) -> None:
    """RANKS copies of one synthetic export of EVENTS events, serial loop against the local cluster."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_export import ensure

    source = ensure(events // 2)
    with tempfile.TemporaryDirectory(prefix="graphscope-ranks-", dir=ROOT / "benchmarks" / "out") as folder:
        for rank in range(ranks):
            shutil.copyfile(source, Path(folder) / f"rank{rank}.sqlite")
        serial, cluster = run(SERIAL, Path(folder)), run(CLUSTER, Path(folder))
    gib = source.stat().st_size * ranks / 2**30
    print(
        f"{ranks} Nsight ranks x {events:,} events ({gib:.1f} GiB of SQLite): serial {serial['seconds']:.1f} s, "
        f"{serial['peak_gib']:.2f} GiB; local cluster ({cluster['workers']} workers) {cluster['seconds']:.1f} s, "
        f"{cluster['peak_gib']:.2f} GiB a worker, scheduler process {cluster['scheduler_peak_gib']:.2f} GiB; "
        f"speed-up {serial['seconds'] / cluster['seconds']:.2f}x",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="8x250000,64x50000,256x10000", help="RANKSxEVENTS,...")
    parser.add_argument("--format", choices=("kineto", "nsys"), default="kineto")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores")
    for spec in args.sets.split(","):
        ranks, events = (int(x) for x in spec.split("x"))
        if args.format == "nsys":
            nsys_set(ranks, events)
            continue
        kernels = 50
        steps = max(events // (2 * kernels + 3), 2)
        with tempfile.TemporaryDirectory(prefix="graphscope-ranks-") as folder:
            t0 = time.perf_counter()
            make = (
                "from pathlib import Path; from tests.synthetic_ranks import write_rank_set; write_rank_set("
                f"Path({folder!r}), world={ranks}, steps={steps}, kernels={kernels}, "
                f"slow_host={{({ranks // 2}, 1): 400_000}})"
            )  # in its own process: Linux hands a parent's peak resident memory on to the children it starts
            subprocess.run([sys.executable, "-c", make], check=True, cwd=ROOT)
            made = time.perf_counter() - t0
            serial, cluster = run(SERIAL, Path(folder)), run(CLUSTER, Path(folder))
        print(
            f"{ranks} ranks x {steps * (2 * kernels + 3):,} events (made in {made:.0f} s): "
            f"serial {serial['seconds']:.1f} s, "
            f"{serial['peak_gib']:.2f} GiB; local cluster ({cluster['workers']} workers) {cluster['seconds']:.1f} s, "
            f"{cluster['peak_gib']:.2f} GiB a worker, scheduler process {cluster['scheduler_peak_gib']:.2f} GiB; "
            f"speed-up {serial['seconds'] / cluster['seconds']:.2f}x; {cluster['verdict'][:90]}",
            flush=True,
        )


if __name__ == "__main__":
    main()
