"""Peak memory and time of `graphscope summary` on a 10M-kernel export (target: under 3 GB peak).

python benchmarks/memory_scale.py [--kernels 10000000]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

from synthetic_export import ensure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=10_000_000)
    args = parser.parse_args()
    path = ensure(args.kernels)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(path), "--json"], check=True, capture_output=True
    )
    seconds = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        f"file: {path.name} ({path.stat().st_size / 1e9:.2f} GB, {args.kernels:,} kernels + {args.kernels:,} API rows)"
    )
    print(f"`graphscope summary --json`: {seconds:.1f} s, peak resident memory {peak_kib / 1024**2:.2f} GiB")


if __name__ == "__main__":
    main()
