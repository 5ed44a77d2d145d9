"""`graphscope report A B -o r.html` on two exports against `graphscope summary` of both (issue 49).

- cold: every command with --no-cache (each reads its files, as a first open does): the report against
  the two summaries, each a fresh process
- warm: both files summarised and reported once before, the cache on: the same report again (the kept
  report, report/compose.py) against the same two summaries again (their kept answers)
- first report of two summarised files: the cache holding both files' entries and kept summaries, not
  the report (it reads the kernels' launch configuration from the files, then adds it to the entries)

Fresh processes, interleaved rounds, medians of round-by-round ratios; wall, CPU (user + system) and peak
memory of each command (a pair of summaries: the sum of their wall and CPU, the larger peak).

    python benchmarks/report_speed.py [--kernels 1000000] [--rounds 3]

Goals (issue 49): cold report <= 1.3x the two cold summaries; warm report <= 2x the two warm summaries.
Writes benchmarks/out/report_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cache_warm import timed
from synthetic_export import OUT, ensure


def both(command, paths: list[Path], env: dict[str, str]) -> dict[str, float]:
    """The summaries of both files, one fresh process each."""
    runs = [timed(command(p), env) for p in paths]
    return {
        "wall_s": sum(r["wall_s"] for r in runs),
        "cpu_s": sum(r["cpu_s"] for r in runs),
        "peak_gib": max(r["peak_gib"] for r in runs),
    }


def wait_for_entries(cache_home: Path, count: int, limit: float = 600.0) -> None:
    deadline = time.monotonic() + limit
    while len(list((cache_home / "graphscope" / "traces").glob("*/manifest.json"))) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the cache entries were never written")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    first = ensure(args.kernels)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        second = scratch / "second.sqlite"
        shutil.copy(first, second)
        paths = [first, second]
        cache_home = scratch / "cache"
        env = {"XDG_CACHE_HOME": str(cache_home), "XDG_CONFIG_HOME": str(scratch)}
        gs = [sys.executable, "-m", "graphscope"]
        out = str(scratch / "r.html")
        report = [*gs, "report", str(first), str(second), "-o", out]

        def summary(path: Path) -> list[str]:
            return [*gs, "summary", "--json", str(path)]

        def cold_summary(path: Path) -> list[str]:
            return [*summary(path), "--no-cache"]

        rows: dict[str, list[dict[str, float]]] = {
            "cold: two summaries": [],
            "cold: report": [],
            "summarised: first report": [],
            "warm: two summaries": [],
            "warm: report": [],
        }
        for _ in range(args.rounds):
            rows["cold: two summaries"].append(both(cold_summary, paths, env))
            rows["cold: report"].append(timed([*report, "--no-cache"], env))
            shutil.rmtree(cache_home, ignore_errors=True)
            both(summary, paths, env)  # the entries and the kept summaries, written once each answered
            wait_for_entries(cache_home, 2)
            rows["summarised: first report"].append(timed(report, env))
            time.sleep(1.0)  # the report's additions to the entries (launch configuration), written after it
            rows["warm: two summaries"].append(both(summary, paths, env))
            rows["warm: report"].append(timed(report, env))
    found: dict[str, dict[str, float]] = {}
    pairs = {
        "cold: report": "cold: two summaries",
        "summarised: first report": "warm: two summaries",
        "warm: report": "warm: two summaries",
    }
    print(f"two exports of {args.kernels:,} kernels + {args.kernels:,} API rows, {args.rounds} interleaved rounds")
    for name, samples in rows.items():
        base = rows[pairs.get(name, name)]
        ratio = statistics.median(s["wall_s"] / b["wall_s"] for s, b in zip(samples, base, strict=True))
        cpu_ratio = statistics.median(s["cpu_s"] / b["cpu_s"] for s, b in zip(samples, base, strict=True))
        found[name] = {
            "wall_s": statistics.median(s["wall_s"] for s in samples),
            "cpu_s": statistics.median(s["cpu_s"] for s in samples),
            "peak_gib": max(s["peak_gib"] for s in samples),
            "ratio": ratio,
            "cpu_ratio": cpu_ratio,
            "against": pairs.get(name, name),
        }
        f = found[name]
        kind = pairs.get(name, "").split(":")[0]
        against = f" {ratio:5.2f}x {kind} two summaries (CPU {cpu_ratio:.2f}x)" if name in pairs else ""
        print(f"  {name:<28} {f['wall_s']:7.3f} s  CPU {f['cpu_s']:6.3f} s  {f['peak_gib']:5.2f} GiB peak{against}")
    print("  goals: cold report <= 1.3x, warm report <= 2x")
    target = OUT / "report_speed.json"
    previous = json.loads(target.read_text()) if target.exists() else {}
    previous[str(args.kernels)] = {"rounds": args.rounds, **found}
    target.write_text(json.dumps(previous, indent=2) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    os.environ.pop("GRAPHSCOPE_NO_CACHE", None)
    main()
