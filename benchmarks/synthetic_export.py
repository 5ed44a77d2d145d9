"""Make a large synthetic Nsight Systems export in the real 2025.3 schema.

The schema (every CREATE statement) is copied from a real export made by Nsight Systems 2025.3 on
an H200; the rows are generated: N kernels on four streams, each launched by one `cuLaunchKernel`
call (N runtime rows, 1:1 correlation), with realistic launch latencies and durations. Each stream
runs its kernels in order (a kernel starts when it is launched and the previous one is done), and
rows are written in start order, as Nsight Systems writes them.

    python benchmarks/synthetic_export.py OUT.sqlite --kernels 1000000
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

import numpy as np

SCHEMA_SOURCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "h200_seed_vecadd_node.sqlite"
KERNEL_NAMES = [f"kernel_{i:02d}" for i in range(48)]
CHUNK = 200_000


def copy_schema(source: Path, target: sqlite3.Connection) -> None:
    """Create every table of the source export (empty) in the target database."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"):
        target.execute(sql)
    for name, value in src.execute("SELECT name, value FROM META_DATA_EXPORT"):
        target.execute("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", (name, value))
    for row in src.execute("SELECT * FROM TARGET_INFO_GPU"):
        target.execute(f"INSERT INTO TARGET_INFO_GPU VALUES ({','.join('?' * len(row))})", row)
    src.close()


def fifo_starts(ready: np.ndarray, duration: np.ndarray, free_at: int) -> np.ndarray:
    """Start times on one in-order stream: each kernel starts when it is ready and its predecessor is done.

    end_i = max(ready_i, end_{i-1}) + d_i unrolls to end_i = S_i + max_j<=i (ready_j - S_{j-1}), S = cumsum(d).
    """
    cumulative = np.cumsum(duration)
    before = cumulative - duration
    ends = cumulative + np.maximum.accumulate(np.maximum(ready, free_at) - before)
    return ends - duration


def generate(path: Path, kernels: int, seed: int = 7) -> None:
    """Write `kernels` kernels and as many launch calls into a new export at `path`."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    copy_schema(SCHEMA_SOURCE, db)
    strings = ["[Unknown]", "cuLaunchKernel", "python3", *KERNEL_NAMES]
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(strings))
    name_base = 3
    pid = 4242
    global_pid = (1 << 48) | (pid << 24)
    global_tid = global_pid | pid
    rng = np.random.default_rng(seed)
    clock = 0
    stream_free: dict[int, int] = {}
    for begin in range(0, kernels, CHUNK):
        n = min(CHUNK, kernels - begin)
        clock = max([clock, *stream_free.values()])  # chunks never overlap, so rows stay in start order
        api_dur = rng.integers(1_800, 6_000, n)
        gap = rng.integers(200, 2_000, n)
        api_start = clock + np.cumsum(api_dur + gap) - (api_dur + gap)
        clock = int(api_start[-1] + api_dur[-1] + gap[-1])
        ready = api_start + rng.integers(2_000, 9_000, n)  # launch latency
        k_dur = rng.integers(1_000, 12_000, n)
        stream = 13 + rng.integers(0, 4, n)
        k_start = np.empty(n, dtype=np.int64)
        for s in np.unique(stream):
            mine = np.flatnonzero(stream == s)
            k_start[mine] = fifo_starts(ready[mine], k_dur[mine], stream_free.get(int(s), 0))
            stream_free[int(s)] = int(k_start[mine][-1] + k_dur[mine][-1])
        corr = np.arange(begin + 1, begin + n + 1)
        name = name_base + rng.integers(0, len(KERNEL_NAMES), n)
        block = rng.choice([64, 128, 256, 512], n)
        grid = (1 << 14) // block
        api_rows = zip(
            api_start.tolist(),
            (api_start + api_dur).tolist(),
            [1] * n,
            [global_tid] * n,
            corr.tolist(),
            [1] * n,
            [0] * n,
            [None] * n,
        )
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", api_rows)
        order = np.argsort(k_start, kind="stable")
        k_start, k_dur, stream, corr, name, block, grid = (
            a[order] for a in (k_start, k_dur, stream, corr, name, block, grid)
        )
        kernel_rows = zip(
            k_start.tolist(),
            (k_start + k_dur).tolist(),
            [0] * n,
            [1] * n,
            [None] * n,
            stream.tolist(),
            corr.tolist(),
            [global_pid] * n,
            name.tolist(),
            name.tolist(),
            name.tolist(),
            [1] * n,
            [1] * n,
            [16] * n,
            grid.tolist(),
            [1] * n,
            [1] * n,
            block.tolist(),
            [1] * n,
            [1] * n,
            [0] * n,
            [0] * n,
            [0] * n,
            [155713536] * n,
            corr.tolist(),
            [32768] * n,
            [None] * n,
            [0] * n,
        )
        db.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({','.join('?' * 28)})", kernel_rows)
        db.commit()
    db.close()


OUT = Path(__file__).resolve().parent / "out"


def ensure(kernels: int) -> Path:
    """The synthetic export with this many kernels in benchmarks/out, made on first use."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"synthetic_{kernels}.sqlite"
    if not path.exists():
        generate(path, kernels)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--kernels", type=int, default=1_000_000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    generate(args.out, args.kernels)
    size_mb = args.out.stat().st_size / 1e6
    print(f"{args.out}: {args.kernels} kernels, {size_mb:.0f} MB in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
