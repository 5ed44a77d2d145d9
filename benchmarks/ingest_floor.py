"""`graphscope summary` and the GUI's first frame against the floor, and against peer tools.

The floor is the least work that answers the same question: a fresh Python process in which SQLite
scans exactly the columns the summary reads (trace/tables.py `EAGER`), nothing more (one `max()` a
column, so SQLite decodes every value and hands none to Python). Every command runs as a fresh process
(start-up included), in interleaved rounds so machine noise hits all of them; each figure is the
median of the round-by-round ratios to the floor, in wall time and in CPU time (user + system of the
process and its threads), with each command's peak resident memory. graphscope's modules are compiled
to bytecode first, as an installed package's are (a checkout run with PYTHONDONTWRITEBYTECODE would
otherwise compile them in every run). Results also go to benchmarks/out/ingest_floor.json.

- graphscope summary --json --no-cache FILE (the cold read, nothing written)
- graphscope summary --json FILE with an empty cache (the cold read that also writes the cache)
- graphscope open FILE --screenshot: time until the timeline has painted its first frame
- peers where they are installed in benchmarks/out/peers (python -m venv benchmarks/out/peers &&
  benchmarks/out/peers/bin/pip install nsys-ai nsys-tui): nsys-tui summary, nsys-ai info and report
  (each on a fresh copy of the file, then again on the same copy: nsys-ai caches beside it when
  DuckDB's sqlite_scanner extension is in ~/.duckdb/extensions), and the plain SQL GROUP BY kernel
  summary an expert would type into the sqlite3 shell

    python benchmarks/ingest_floor.py [--kernels 1000000] [--rounds 5] [--no-peers] [--no-gui]

Targets (issue 49): the cold summary within 1.2x of the floor's wall time and 1.6x of its CPU time;
first frame within 1.5x of the summary (issue 13).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_export import OUT, ensure

from graphscope.trace.tables import BY_KEY, EAGER

PEERS = OUT / "peers" / "bin"
PLAIN_SQL = (
    'SELECT s.value, count(*), sum(k."end" - k.start), avg(k."end" - k.start) '
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName GROUP BY k.shortName "
    "ORDER BY 3 DESC LIMIT 10;"
)


def floor_code() -> str:
    """A Python program that scans the summary's columns of the big tables once, and nothing else."""
    queries = []
    for key, names in EAGER.items():
        table, specs = BY_KEY[key].export, BY_KEY[key].columns
        columns = ", ".join(f'max("{specs[n].sources[0]}")' for n in names)
        queries.append(f"SELECT {columns} FROM {table}")
    return (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)\n"
        f"for q in {queries!r}:\n"
        "    try: c.execute(q).fetchall()\n"
        "    except sqlite3.OperationalError: pass\n"
    )


def timed(
    command: list[str], env: dict[str, str] | None = None, until: str | None = None
) -> tuple[float, float, float]:
    """(seconds, peak resident GiB, CPU seconds) of a fresh process; with `until`, stop it when stderr
    shows that text."""
    t0 = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
    )
    seconds = None
    if until is not None:
        for line in process.stderr:
            if until in line:
                seconds = time.perf_counter() - t0
                os.kill(process.pid, signal.SIGTERM)  # not terminate(): its poll() may reap it before wait4
                break
    else:
        process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = status  # reaped here, for its resource usage
    if until is None and status != 0:
        raise RuntimeError(f"{' '.join(command[2:5])} failed with status {status}")
    if until is not None and seconds is None:  # checked before the wall time fills it in
        raise RuntimeError(f"{' '.join(command[2:5])} never printed {until!r}")
    seconds = seconds if seconds is not None else time.perf_counter() - t0
    return seconds, usage.ru_maxrss / 1024**2, usage.ru_utime + usage.ru_stime


FLOOR = "floor: SQLite scan of the summary's columns"
SUMMARY = "graphscope summary --json --no-cache"
CACHE_ON = "graphscope summary --json, cache on (written)"
EMPTY_CACHE = "empty-cache"  # a folder under the scratch one, emptied before each cache-on run


def commands(path: Path, scratch: Path, peers: bool, gui: bool = True) -> dict[str, tuple[list[str], dict, str | None]]:
    gui_env = {"QT_QPA_PLATFORM": "offscreen", "GRAPHSCOPE_REPORT_FIRST_FRAME": "1", "XDG_CONFIG_HOME": str(scratch)}
    found = {
        FLOOR: ([sys.executable, "-c", floor_code(), str(path)], {}, None),
        SUMMARY: (
            [sys.executable, "-m", "graphscope", "summary", "--json", "--no-cache", str(path)],
            {},
            None,
        ),  # the cold path (benchmarks/cache_warm.py times the warm one)
        CACHE_ON: (  # cold too (the cache is emptied first), but the trace is written to the cache
            [sys.executable, "-m", "graphscope", "summary", "--json", str(path)],
            {"XDG_CACHE_HOME": str(scratch / EMPTY_CACHE), "GRAPHSCOPE_NO_CACHE": ""},
            None,
        ),
    }
    if gui:
        found["graphscope open: first frame"] = (
            [
                sys.executable,
                "-m",
                "graphscope",
                "open",
                str(path),
                "--no-cache",
                "--screenshot",
                str(scratch / "x.png"),
            ],
            gui_env,
            "first frame",
        )
    if not peers:
        return found
    if shutil.which("sqlite3"):
        found["peer: plain SQL GROUP BY (sqlite3 shell)"] = (["sqlite3", "-readonly", str(path), PLAIN_SQL], {}, None)
    copy = scratch / "peer-copy.sqlite"  # nsys-ai writes indexes into the file it reads
    if (PEERS / "nsys-tui").exists():
        found["peer: nsys-tui summary"] = ([str(PEERS / "nsys-tui"), "summary", str(copy)], {}, None)
    if (PEERS / "nsys-ai").exists():
        info = [str(PEERS / "nsys-ai"), "info", str(copy)]
        found["peer: nsys-ai info"] = (info, {}, None)
        found[f"peer: nsys-ai info{AGAIN}"] = (info, {}, None)
        report = [str(PEERS / "nsys-ai"), "report", str(copy), "--gpu", "0", "--trim", "0", "1000000"]
        found["peer: nsys-ai report"] = (report, {}, None)
        found[f"peer: nsys-ai report{AGAIN}"] = (report, {}, None)
    return found


AGAIN = ", again"  # the same copy once more: what nsys-ai cached beside it (with DuckDB's SQLite extension)


def duckdb_sqlite_extension() -> bool:
    """Whether nsys-ai's DuckDB finds its sqlite_scanner extension (else each run tries to download it)."""
    return any((Path.home() / ".duckdb" / "extensions").glob("*/*/sqlite_scanner.duckdb_extension"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--no-gui", action="store_true", help="leave out the first frame")
    args = parser.parse_args()
    path = ensure(args.kernels)
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "graphscope", quiet=1)
    results: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        runs = commands(path, scratch, not args.no_peers, not args.no_gui)
        for _ in range(args.rounds):
            for name, (command, env, until) in runs.items():
                if name.startswith("peer: nsys") and not name.endswith(AGAIN):  # cold: a fresh copy
                    shutil.copy(path, scratch / "peer-copy.sqlite")
                if name == CACHE_ON:
                    shutil.rmtree(scratch / EMPTY_CACHE, ignore_errors=True)
                try:
                    results.setdefault(name, []).append(timed(command, env, until))
                except RuntimeError as exc:
                    print(f"  ({name}: {exc})")
    floor_runs = results[FLOOR]

    def ratio(runs: list[tuple[float, float, float]], field: int) -> float:  # median of round-by-round ratios
        return statistics.median(run[field] / base[field] for run, base in zip(runs, floor_runs))

    table = {
        name: {
            "seconds": statistics.median(s for s, _, _ in r),
            "cpu_seconds": statistics.median(c for _, _, c in r),
            "peak_gib": max(m for _, m, _ in r),
            "x_floor_wall": ratio(r, 0),
            "x_floor_cpu": ratio(r, 2),
            "rounds": [{"seconds": s, "cpu_seconds": c, "peak_gib": m} for s, m, c in r],
        }
        for name, r in results.items()
        if r
    }
    summary = table[SUMMARY]["seconds"]
    size = path.stat().st_size / 1e6
    print(f"file: {path.name}, {size:,.0f} MB, {args.kernels:,} kernels + {args.kernels:,} API rows")
    print(f"fresh processes, {args.rounds} interleaved rounds on {os.cpu_count()} cores; x floor: median of the")
    print("round-by-round ratios (wall, and CPU = user + system); seconds: medians")
    if any(name.startswith("peer: nsys-ai") for name in table):
        found = "installed" if duckdb_sqlite_extension() else "absent (nsys-ai tries to download it each run)"
        print(f"DuckDB's sqlite_scanner extension: {found}")
    heads = f"{'seconds':>8} {'CPU s':>6} {'x floor':>8} {'x CPU':>6} {'x summary':>10} {'peak GiB':>9}"
    print(f"  {'command':<46} {heads}")
    for name, row in table.items():
        print(
            f"  {name:<46} {row['seconds']:8.2f} {row['cpu_seconds']:6.2f} {row['x_floor_wall']:8.2f} "
            f"{row['x_floor_cpu']:6.2f} {row['seconds'] / summary:10.2f} {row['peak_gib']:9.2f}"
        )
    out = Path(__file__).resolve().parent / "out" / "ingest_floor.json"
    found = {"file": path.name, "kernels": args.kernels, "rounds": args.rounds, "commands": table}
    out.write_text(json.dumps(found, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
