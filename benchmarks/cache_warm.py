"""Second questions of a cached file, and the GUI's first frame with the cache on, against their floors
(issue 49; fresh processes, interleaved rounds, medians of pair-by-pair ratios; wall, CPU and peak memory).

Summary questions (each round: the cache emptied, then):
- floor: a fresh Python process in which SQLite scans exactly the summary's columns (ingest_floor.py)
- summary, cold: `summary --json` with the cache empty (reads the file; writes the entry once it answered)
- warm, same question: `summary --json` again (the kept answer)
- warm, --top 11: another question of the same analysis (the kept summary, analysis/summary_file.py)
- warm, --by-nvtx: the NVTX table, which needs the launch analysis of the cached columns (memory-mapped),
  joined to the kept summary
- warm, report F: a question that needs columns the summary did not read (the kernels' launch
  configuration: read from the file, then added to the entry)
- summary, --no-cache: the path without the cache

GUI (`--gui`): `graphscope open F --screenshot` until its first frame, interleaved: the cache on but
empty against `--no-cache` (issue 49: no slower), and with the cached columns and the saved view.

    python benchmarks/cache_warm.py [--kernels 1000000] [--rounds 5] [--gui] [--gui-rounds 6]

Writes benchmarks/out/cache_warm.json. Goals (issue 49): a different question <= 0.3x the floor; the
first frame with the cache on but empty <= 1.0x the one without.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest_floor import floor_code
from ingest_floor import timed as run_timed
from synthetic_export import OUT, ensure


def timed(command: list[str], env: dict[str, str], until: str | None = None) -> dict[str, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident GiB of a fresh process; with `until`,
    until its stderr shows that text (then it is stopped: its CPU is what it spent until then)."""
    wall, peak, cpu = run_timed(command, env, until)
    return {"wall_s": wall, "cpu_s": cpu, "peak_gib": peak}


def wait_for_entry(cache_home: Path, limit: float = 600.0) -> None:
    """Until the detached writer of the cold command has put the file's entry in place."""
    deadline = time.monotonic() + limit
    while not list((cache_home / "graphscope" / "traces").glob("*/manifest.json")):
        if time.monotonic() > deadline:
            raise RuntimeError("the cache entry was never written")
        time.sleep(0.2)


def wait_for_saved_view(cache_home: Path, limit: float = 300.0) -> None:
    """Until the GUI's writer of the saved view has finished its entry."""
    deadline = time.monotonic() + limit
    while not any((found.parent / "manifest.json").exists() for found in cache_home.rglob("parts.pickle")):
        if time.monotonic() > deadline:
            raise RuntimeError("the GUI never saved its view")
        time.sleep(0.5)


def summarise(results: dict[str, list[dict[str, float]]], floor: str) -> dict[str, dict[str, float]]:
    """Per case: median wall, CPU and the largest peak, and the median of its round-by-round ratios to `floor`."""
    base = results[floor]
    found = {}
    for name, samples in results.items():
        found[name] = {
            "wall_s": statistics.median(s["wall_s"] for s in samples),
            "cpu_s": statistics.median(s["cpu_s"] for s in samples),
            "peak_gib": max(s["peak_gib"] for s in samples),
            "ratio": statistics.median(s["wall_s"] / b["wall_s"] for s, b in zip(samples, base, strict=True)),
            "cpu_ratio": statistics.median(s["cpu_s"] / b["cpu_s"] for s, b in zip(samples, base, strict=True)),
            "rounds_wall_s": [round(s["wall_s"], 3) for s in samples],
            "rounds_cpu_s": [round(s["cpu_s"], 3) for s in samples],
        }
    return found


def show(title: str, found: dict[str, dict[str, float]], against: str) -> None:
    print(title)
    for name, f in found.items():
        print(
            f"  {name:<44} {f['wall_s']:7.3f} s  {f['ratio']:5.2f}x {against} (CPU {f['cpu_s']:6.3f} s, "
            f"{f['cpu_ratio']:5.2f}x)  {f['peak_gib']:5.2f} GiB peak"
        )


def summary_rounds(path: Path, scratch: Path, rounds: int) -> dict[str, dict[str, float]]:
    cache_home = scratch / "cache"
    env = {"XDG_CACHE_HOME": str(cache_home), "XDG_CONFIG_HOME": str(scratch)}
    gs = [sys.executable, "-m", "graphscope"]
    summary = [*gs, "summary", "--json", str(path)]
    cases = {
        "floor: SQLite scan of the summary's columns": [sys.executable, "-c", floor_code(), str(path)],
        "summary, cold (cache emptied first)": summary,
        "warm, same question (kept answer)": summary,
        "warm, --top 11 (text)": [*gs, "summary", "--top", "11", str(path)],
        "warm, --by-nvtx (analysis + kept summary)": [*summary, "--by-nvtx"],
        "warm, report F (+ launch configuration)": [*gs, "report", str(path), "-o", str(scratch / "r.json")],
        "summary, --no-cache": [*summary, "--no-cache"],
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, command in cases.items():
            if name.startswith("summary, cold"):
                shutil.rmtree(cache_home, ignore_errors=True)
            results[name].append(timed(command, env))
            if name.startswith("summary, cold"):
                wait_for_entry(cache_home)
    found = summarise(results, "floor: SQLite scan of the summary's columns")
    show(f"{path.name}: {rounds} interleaved rounds, medians (fresh processes)", found, "floor")
    return found


def gui_rounds(path: Path, scratch: Path, rounds: int) -> dict[str, dict[str, float]]:
    cache_home = scratch / "gui-cache"
    env = {
        "XDG_CACHE_HOME": str(cache_home),
        "XDG_CONFIG_HOME": str(scratch),
        "QT_QPA_PLATFORM": "offscreen",
        "GRAPHSCOPE_REPORT_FIRST_FRAME": "1",
    }
    frame = [sys.executable, "-m", "graphscope", "open", str(path), "--screenshot", str(scratch / "x.png")]
    view_home = scratch / "view-cache"  # kept across rounds: the file opened once in the GUI before
    viewed = {**env, "XDG_CACHE_HOME": str(view_home)}
    subprocess.run(frame, env={**os.environ, **viewed}, check=True, capture_output=True)
    wait_for_saved_view(view_home)
    cases = {
        "first frame, --no-cache": ([*frame, "--no-cache"], env),
        "first frame, cache on but empty": (frame, env),
        "first frame, saved view": (frame, viewed),
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
    for number in range(rounds):
        order = list(cases.items()) if number % 2 == 0 else list(reversed(cases.items()))  # A B, then B A
        for name, (command, environment) in order:
            if name.endswith("empty"):
                shutil.rmtree(cache_home, ignore_errors=True)
            results[name].append(timed(command, environment, "first frame"))
            time.sleep(1.0)  # a killed window's cache writer thread ends with it; let the disk settle
    found = summarise(results, "first frame, --no-cache")
    show(f"{path.name}: GUI first frame, {rounds} interleaved rounds", found, "--no-cache")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gui", action="store_true", help="also time the GUI's first frame")
    parser.add_argument("--gui-rounds", type=int, default=6)
    parser.add_argument("--no-summary", action="store_true", help="only the GUI's first frame")
    args = parser.parse_args()
    path = ensure(args.kernels)
    scratch = Path(tempfile.mkdtemp(prefix="graphscope-cache-bench-"))
    written: dict[str, object] = {"file": path.name, "rounds": args.rounds}
    try:
        if not args.no_summary:
            written["summary"] = summary_rounds(path, scratch, args.rounds)
        if args.gui or args.no_summary:
            written["gui"] = gui_rounds(path, scratch, args.gui_rounds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out = OUT / "cache_warm.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    previous[str(args.kernels)] = written
    out.write_text(json.dumps(previous, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
