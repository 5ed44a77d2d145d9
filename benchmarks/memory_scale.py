"""How `graphscope summary --json --no-cache` scales with the file: wall time, user and system CPU, peak
resident memory, and each per event, on synthetic exports of several sizes (N kernels + N API rows).

Targets (issue 26, docs/architecture.md): at most 60 bytes per event at 10M + 10M; system time per event
flat with size. Fresh processes, sizes interleaved round by round; each run starts after the host has
taken back what the previous one freed (`--settle`, see frames_while_loading.py).

    python benchmarks/memory_scale.py [--kernels 1000000,3000000,10000000] [--rounds 3]

graphscope's modules are compiled to bytecode first (as an installed package's are); results also go to
benchmarks/out/memory_scale.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from synthetic_export import ensure


def run(path) -> dict[str, float]:
    """One fresh summary: seconds, user and system CPU seconds, peak resident bytes, minor page faults."""
    command = [sys.executable, "-m", "graphscope", "summary", str(path), "--json", "--no-cache"]
    t0 = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - t0
    if status:
        raise RuntimeError(process.stderr.read().decode()[-2000:])
    return {
        "wall": seconds,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "peak": usage.ru_maxrss * 1024,
        "faults": usage.ru_minflt,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="1000000,3000000,10000000", help="comma-separated sizes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=10.0, help="seconds between runs")
    args = parser.parse_args()
    sizes = [int(n) for n in args.kernels.split(",")]
    paths = {n: ensure(n) for n in sizes}
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "graphscope", quiet=1)
    seen: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for _ in range(args.rounds):
        for n in sizes:
            time.sleep(args.settle)
            seen[n].append(run(paths[n]))
    print(f"summary --json --no-cache: medians of {args.rounds} interleaved rounds, fresh processes")
    print("  events        wall s   user s   sys s   peak GiB   B/event   user ns/ev   sys ns/ev   faults/1k ev")
    found = {}
    for n in sizes:
        m = {key: statistics.median(r[key] for r in seen[n]) for key in seen[n][0]}
        events = 2 * n
        sys_range = f"{min(r['sys'] for r in seen[n]):.2f}-{max(r['sys'] for r in seen[n]):.2f}"
        print(
            f"  {events:>11,}  {m['wall']:7.2f}  {m['user']:7.2f}  {m['sys']:6.2f}   {m['peak'] / 2**30:7.2f}   "
            f"{m['peak'] / events:7.1f}   {m['user'] / events * 1e9:10.0f}   {m['sys'] / events * 1e9:9.0f}   "
            f"{m['faults'] / events * 1e3:10.1f}   (sys {sys_range} s)"
        )
        found[str(events)] = {
            **m,
            "bytes_per_event": m["peak"] / events,
            "sys_ns_per_event": m["sys"] / events * 1e9,
            "user_ns_per_event": m["user"] / events * 1e9,
            "rounds": seen[n],
        }
    out = Path(__file__).resolve().parent / "out" / "memory_scale.json"
    out.write_text(json.dumps({"rounds": args.rounds, "settle": args.settle, "events": found}, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
