"""The stream overlap graphscope counts in a trace (`summary --json`'s `stream_overlap`, analysis/overlap.py)
against a second count: plain SQL window functions over an Nsight export, or plain JSON over a PyTorch
profiler (Kineto) trace. The summary is asked for the whole trace (`--whole-trace`): a graphscope run's
trace is otherwise scoped to its measured repetitions, which the plain counts do not know. Prints one line
per file: both counts, both overlap totals, and whether they agree.

    python benchmarks/pdl_trace_check.py TRACE...
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def sql_overlap(path: Path) -> tuple[int, int]:
    """Rows that start before the latest end so far on their (device, stream), and by how much."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    select = 'SELECT deviceId AS d, streamId AS s, start, MAX("end", start) AS stop FROM {}'
    work = " UNION ALL ".join(select.format(t) for t in TABLES if t in present)
    if not work:
        return 0, 0
    count, total = con.execute(
        f"""WITH w AS ({work}),
        r AS (SELECT start, stop, MAX(stop) OVER (PARTITION BY d, s ORDER BY start, stop
              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach FROM w)
        SELECT COUNT(*), COALESCE(SUM(MIN(stop, reach) - start), 0) FROM r WHERE reach > start"""
    ).fetchone()
    return int(count), int(total)


def json_overlap(path: Path) -> tuple[int, int]:
    """The same over a Kineto trace's GPU events (kernel, gpu_memcpy, gpu_memset), in ns from its us."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    rows: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            start = round(float(event["ts"]) * 1000)
            end = start + max(round(float(event.get("dur", 0)) * 1000), 0)
            args = event.get("args", {})
            rows.setdefault((int(args.get("device", 0)), int(args.get("stream", 0))), []).append((start, end))
    count = total = 0
    for stream in rows.values():
        stream.sort()
        reach = None
        for start, end in stream:
            if reach is not None and reach > start:
                count += 1
                total += min(end, reach) - start
            reach = end if reach is None else max(reach, end)
    return count, total


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        summary = subprocess.run(
            [sys.executable, "-m", "graphscope", "summary", str(path), "--json", "--whole-trace"],
            capture_output=True,
            text=True,
        )
        if summary.returncode != 0:
            print(f"{path.name}: summary failed: {summary.stderr.strip()[-300:]}")
            continue
        ours = json.loads(summary.stdout)["stream_overlap"]
        try:
            second = sql_overlap(path) if path.suffix == ".sqlite" else json_overlap(path)
        except (sqlite3.Error, KeyError, ValueError) as exc:
            print(f"{path.name}: the second count failed: {exc}")
            continue
        agree = (ours["count"], ours["ns"]) == second
        print(
            f"{path.name}: graphscope {ours['count']} rows, {ours['ns']} ns; "
            f"{'SQL' if path.suffix == '.sqlite' else 'plain JSON'} {second[0]} rows, {second[1]} ns; "
            f"{'agree' if agree else 'DIFFER'}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
