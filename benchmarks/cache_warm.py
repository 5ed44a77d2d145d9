"""Second opens: `graphscope summary` and the GUI's first frame with graphscope's cache, against the
SQLite floor and against the same commands without the cache (all fresh processes, interleaved rounds).

- floor: a fresh Python process in which SQLite scans exactly the summary's columns (ingest_floor.py)
- summary, cold: the cache emptied before each round (reads the file and writes the cache beside it)
- summary, no cache: `--no-cache` (the path before the cache existed)
- summary, warm answer: the same question again (the kept answer)
- summary, warm columns: another question (`--top 11`) of the cached file: memory-mapped columns
- first frame, no cache / warm columns: `graphscope open FILE --screenshot` until its first frame, with
  `--no-cache`, and with only the columns the summary cached (the lanes, analysis and panels computed)
- first frame, second open: the same after one whole GUI open of the file saved its view (view/saved.py)

    python benchmarks/cache_warm.py [--kernels 1000000] [--rounds 5]

Targets (issue 26): warm summary under 0.3x the floor; warm first frame of 10M + 10M under 2 s; the cold
path no slower than without the cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
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
    view_home = scratch / "view-cache"  # kept across rounds: the file opened once in the GUI before
    viewed = {**gui, "XDG_CACHE_HOME": str(view_home)}
    subprocess.run(frame, env={**os.environ, **viewed}, check=True, capture_output=True)
    wait_for_saved_view(view_home)
    cases = {
        "floor: SQLite scan of the summary's columns": ([sys.executable, "-c", floor_code(), str(path)], env, None),
        "summary, cold (cache emptied first)": (summary, env, None),
        "summary, no cache": ([*summary, "--no-cache"], env, None),
        "summary, warm answer": (summary, env, None),
        "summary, warm columns (--top 11)": ([*summary, "--top", "11"], env, None),
        "first frame, no cache": ([*frame, "--no-cache"], gui, "first frame"),
        "first frame, warm columns": (frame, gui, "first frame"),
        "first frame, second open (saved view)": (frame, viewed, "first frame"),
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
        low, high = min(s for s, _ in samples), max(s for s, _ in samples)
        print(
            f"  {name:<46} {seconds:7.3f} s ({low:.2f}-{high:.2f})  {seconds / floor:5.2f}x floor  {peak:5.2f} GiB peak"
        )
    shutil.rmtree(scratch, ignore_errors=True)


def wait_for_saved_view(cache_home: Path, limit: float = 300.0) -> None:
    """Until the detached writer of the GUI's saved view has finished its entry."""
    deadline = time.monotonic() + limit
    while not any((found.parent / "manifest.json").exists() for found in cache_home.rglob("parts.pickle")):
        if time.monotonic() > deadline:
            raise RuntimeError("the GUI never saved its view")
        time.sleep(0.5)


if __name__ == "__main__":
    main()
