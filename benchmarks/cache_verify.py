"""What verifying the cache costs on a warm open (issue 41): the file's identity, a kept answer's digest, and
each cached column's checks (size, header and sampled blocks, the 64-bit sum of its data) against mapping the
same `.npy` files unchecked; in one process, best of `--rounds`.

    python benchmarks/cache_verify.py [--kernels 1000000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="graphscope-verify-bench-")

from synthetic_export import ensure  # noqa: E402

from graphscope.core import answer_cache  # noqa: E402
from graphscope.trace import cache, load_trace, tables  # noqa: E402


def best(rounds: int, work) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    path = ensure(args.kernels)
    load_trace(path)
    cache.wait_for_writers()
    entry = cache.open_entry(path)
    assert entry is not None, "the entry was not written"
    files = [
        (name, record)
        for name, record in entry.manifest["files"].items()
        if name.split(".")[0] in tables.ALL_KEYS and "__" not in name
    ]
    mapped = sum(record["size"] for _, record in files)

    def touch(array: np.ndarray) -> None:
        np.add.reduce(array.reshape(-1).view(np.uint8)[:: 4096])  # every page, as an analysis would

    def checked() -> None:
        for name, record in files:
            cache.load_array(entry.path / name, record)

    def unchecked() -> None:
        for name, _ in files:
            touch(np.load(entry.path / name, mmap_mode="r"))

    answer_cache.put(path, {"q": 1}, "x" * 4000)
    rows = {
        "identity of the file (cache_files.identity)": best(args.rounds * 10, lambda: answer_cache.file_key(path, 1)),
        "a kept answer read and its digest checked": best(args.rounds * 10, lambda: answer_cache.get(path, {"q": 1})),
        f"{len(files)} columns, {mapped / 2**20:.0f} MiB, mapped and verified": best(args.rounds, checked),
        f"{len(files)} columns mapped unchecked, each page touched": best(args.rounds, unchecked),
        "warm load_trace (the summary's columns, verified)": best(args.rounds, lambda: load_trace(path)),
    }
    for label, seconds in rows.items():
        print(f"{label:60s} {seconds * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
