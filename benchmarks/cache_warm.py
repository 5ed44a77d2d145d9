"""Second opens: `graphscope summary` and the GUI's first frame with graphscope's cache, against the
SQLite floor and against the same commands without the cache (all fresh processes, interleaved rounds).

- floor: a fresh Python process in which SQLite scans exactly the summary's columns (ingest_floor.py)
- summary, cold: the cache emptied before each round (reads the file and writes the cache beside it)
- summary, no cache: `--no-cache` (the path before the cache existed)
- summary, warm answer: the same question again (the kept answer)
- summary, warm columns: another question (`--top 11`) of the cached file: memory-mapped columns
- first frame, warm / no cache: `graphscope open FILE --screenshot` until its first frame

    python benchmarks/cache_warm.py [--kernels 1000000] [--rounds 5]

Targets (issue 26): warm summary under 0.3x the floor; warm first frame of 10M + 10M under 2 s; the cold
path no slower than without the cache.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from ingest_floor import floor_code, timed
from synthetic_export import ensure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    path = ensure(args.kernels)
    scratch = Path(tempfile.mkdtemp(prefix="graphscope-cache-bench-"))
    cache_home = scratch / "cache"
    env = {"XDG_CACHE_HOME": str(cache_home), "XDG_CONFIG_HOME": str(scratch)}
    gui = {**env, "QT_QPA_PLATFORM": "offscreen", "GRAPHSCOPE_REPORT_FIRST_FRAME": "1"}
    summary = [sys.executable, "-m", "graphscope", "summary", "--json", str(path)]
    frame = [sys.executable, "-m", "graphscope", "open", str(path), "--screenshot", str(scratch / "x.png")]
    cases = {
        "floor: SQLite scan of the summary's columns": ([sys.executable, "-c", floor_code(), str(path)], env, None),
        "summary, cold (cache emptied first)": (summary, env, None),
        "summary, no cache": ([*summary, "--no-cache"], env, None),
        "summary, warm answer": (summary, env, None),
        "summary, warm columns (--top 11)": ([*summary, "--top", "11"], env, None),
        "first frame, no cache": ([*frame, "--no-cache"], gui, "first frame"),
        "first frame, warm": (frame, gui, "first frame"),
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, (command, environment, until) in cases.items():
            if name.startswith("summary, cold"):
                shutil.rmtree(cache_home, ignore_errors=True)
            if name.startswith("summary, warm columns"):
                shutil.rmtree(cache_home / "graphscope" / "answers", ignore_errors=True)
            results[name].append(timed(command, environment, until))
    floor = statistics.median(s for s, _ in results["floor: SQLite scan of the summary's columns"])
    print(f"{path.name}: {args.rounds} interleaved rounds, medians (fresh processes)")
    for name, samples in results.items():
        seconds = statistics.median(s for s, _ in samples)
        peak = max(m for _, m in samples)
        print(f"  {name:<46} {seconds:7.3f} s  {seconds / floor:5.2f}x floor  {peak:5.2f} GiB peak")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
