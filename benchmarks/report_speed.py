"""`graphscope report A B -o r.html` on two 1M-kernel exports against `graphscope summary` of both.

Target (issue 26): the report in at most 1.5x the time of summarising both files (fresh processes,
medians of interleaved rounds, every command with --no-cache: each reads its files, as a first open does).

    python benchmarks/report_speed.py [--kernels 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_export import ensure


def seconds(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    first = ensure(args.kernels)
    with tempfile.TemporaryDirectory() as tmp:
        second = Path(tmp) / "second.sqlite"
        shutil.copy(first, second)
        gs = [sys.executable, "-m", "graphscope"]
        summaries, reports = [], []
        for _ in range(args.rounds):
            summaries.append(sum(seconds([*gs, "summary", "--json", "--no-cache", str(p)]) for p in (first, second)))
            out = str(Path(tmp) / "r.html")
            reports.append(seconds([*gs, "report", "--no-cache", str(first), str(second), "-o", out]))
    summary, report = statistics.median(summaries), statistics.median(reports)
    print(f"two exports of {args.kernels:,} kernels + {args.kernels:,} API rows, medians of {args.rounds} rounds")
    print(f"  summary of each, both as fresh processes: {summary:.2f} s")
    ratios = sorted(r / s for r, s in zip(reports, summaries))
    print(f"  report A B -o r.html (one process):       {report:.2f} s  ({report / summary:.2f}x, target <= 1.5x)")
    print(f"  per round: {', '.join(f'{r:.2f}x' for r in ratios)}")


if __name__ == "__main__":
    main()
