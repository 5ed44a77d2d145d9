"""`graphscope summary` on a 1M-kernel + 1M-API-row export against SQLite's own scan of the same columns.

Target (ARCHITECTURE.md): within 3x of SQLite's scan. Both are measured in the same run, interleaved
(scan, then summary, N times) so that machine noise hits both; the medians are reported.

    python benchmarks/summary_speed.py [--kernels 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

from synthetic_export import ensure

from graphscope.trace import schema


def sqlite_scan_seconds(path: Path) -> float:
    """SQLite alone: one pass over every column graphscope reads from the two big tables."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    total = 0.0
    for table, specs in ((schema.KERNEL, schema.KERNEL_COLUMNS), (schema.RUNTIME, schema.API_COLUMNS)):
        columns = ", ".join(f'max("{spec.source}")' for spec in specs.values())
        t0 = time.perf_counter()
        conn.execute(f"SELECT {columns} FROM {table}").fetchone()
        total += time.perf_counter() - t0
    conn.close()
    return total


def summary_seconds(path: Path) -> float:
    """load_trace + summarize timed inside a fresh process (no warm allocator, no cached imports)."""
    code = (
        "import json, sys, time; from graphscope.trace import load_trace; "
        "from graphscope.analysis.summary import summarize; t0 = time.perf_counter(); "
        "json.dumps(summarize(load_trace(sys.argv[1]))); print(time.perf_counter() - t0)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True, text=True)
    return float(out.stdout)


def cli_seconds(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(path), "--json"], check=True, capture_output=True
    )
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = ensure(args.kernels)
    scans, summaries, clis = [], [], []
    for _ in range(args.repeat):
        scans.append(sqlite_scan_seconds(path))
        summaries.append(summary_seconds(path))
        clis.append(cli_seconds(path))
    scan, summary, cli = (statistics.median(x) for x in (scans, summaries, clis))
    print(
        f"file: {path.name} ({path.stat().st_size / 1e6:.0f} MB, {args.kernels:,} kernels + {args.kernels:,} API rows)"
    )
    print(f"medians of {args.repeat} interleaved runs")
    print(f"SQLite scan of the same columns : {scan:.3f} s")
    print(f"load + summarize (fresh process): {summary:.3f} s  ({summary / scan:.2f}x the scan)")
    print(f"`graphscope summary --json`     : {cli:.3f} s  ({cli / scan:.2f}x, with interpreter start-up)")


if __name__ == "__main__":
    main()
