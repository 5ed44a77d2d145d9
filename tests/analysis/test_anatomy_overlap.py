"""Work that starts before the previous work on its stream ends (programmatic dependent launch) is
overlap, counted per stream: never a negative gap, never a damaged row; busy time stays a union."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
from pathlib import Path

from graphscope.cli import main
from tests.conftest import union_ns

DATA = Path(__file__).resolve().parents[1] / "data"
US = 1000


def _summary(path: Path, capsys) -> dict:
    assert main(["summary", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)




def test_pdl_overlap_on_a_made_kineto_trace(tmp_path, capsys):
    """Stream 7: A 0-10, B 8-20 (starts 2 us before A ends), C 15-18 (inside B: 3 us), D 25-30; stream 8:
    E 5-9, concurrent with A but on its own stream (not overlap)."""
    kernels = [("A", 0, 10, 7), ("B", 8, 12, 7), ("C", 15, 3, 7), ("D", 25, 5, 7), ("E", 5, 4, 8)]
    events = []
    for i, (name, ts, dur, stream) in enumerate(kernels, start=1):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts - 3, "dur": 1, "args": {"correlation": i}})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                       "args": {"device": 0, "stream": stream, "context": 1, "correlation": i}})  # fmt: skip
    path = tmp_path / "pdl.pt.trace.json.gz"
    with gzip.open(path, "wt") as out:
        json.dump({"traceEvents": events}, out)
    s = _summary(path, capsys)
    assert s["stream_overlap"] == {
        "count": 2,
        "ns": 5 * US,
        "streams": [{"device": 0, "stream": 7, "count": 2, "ns": 5 * US}],
    }
    (gpu,) = s["gpu"]
    assert gpu["busy_ns"] == 25 * US  # 0-20 and 25-30: the union, the overlaps counted once
    assert gpu["host_wait_idle_ns"] >= 0 and gpu["other_idle_ns"] >= 0
    assert gpu["busy_ns"] + gpu["host_wait_idle_ns"] + gpu["other_idle_ns"] == s["span_ns"]
    assert s["kernels"] == {"count": 5, "total_ns": 34 * US} and not s["warnings"]


def test_an_export_mutated_to_overlap(tmp_path, capsys):
    """The seed's node export with one eager kernel moved to start 500 ns before its predecessor on the same
    stream ends: one overlap of 500 ns, no warning, busy time the union sqlite3 and a plain loop give."""
    path = tmp_path / "mutated.sqlite"
    shutil.copy(DATA / "h200_seed_vecadd_node.sqlite", path)
    baseline = _summary(DATA / "h200_seed_vecadd_node.sqlite", capsys)
    assert baseline["stream_overlap"]["count"] == 0
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT rowid, start, end, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NULL ORDER BY start"
    ).fetchall()
    (prev, victim) = next((a, b) for a, b in itertools.pairwise(rows) if a[3] == b[3] and b[1] - a[2] > 1000)
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = ? WHERE rowid = ?", (prev[2] - 500, victim[0]))
    db.commit()
    spans = db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if db.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]:
            spans += db.execute(f"SELECT start, end FROM {table}").fetchall()
    db.close()
    s = _summary(path, capsys)
    assert s["stream_overlap"] == {
        "count": 1,
        "ns": 500,
        "streams": [{"device": 0, "stream": prev[3], "count": 1, "ns": 500}],
    }
    assert s["warnings"] == baseline["warnings"]
    (gpu,) = s["gpu"]
    assert gpu["busy_ns"] == union_ns(spans)
    assert gpu["busy_ns"] + gpu["host_wait_idle_ns"] + gpu["other_idle_ns"] == s["span_ns"]
    assert s["kernels"]["count"] == baseline["kernels"]["count"]


def test_overlap_on_a_shipped_trace_against_plain_json(capsys):
    """hta__rank0_of_16_graph_launches: the count and time by a plain loop over the GPU events per stream."""
    path = Path("/work/shared/traces/kineto/hta__rank0_of_16_graph_launches.json.gz")
    if not path.exists():
        path = Path(__file__).resolve().parents[3] / "shared" / "traces" / "kineto" / path.name
    with gzip.open(path) as stream:
        events = json.load(stream)["traceEvents"]
    by_stream: dict[tuple, list] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            start = round(e["ts"] * 1000)
            by_stream.setdefault((e["args"]["device"], e["args"]["stream"]), []).append(
                (start, start + round(e["dur"] * 1000))
            )
    count = ns = 0
    for spans in by_stream.values():
        reach = None
        for start, end in sorted(spans):
            if reach is not None and min(end, reach) > start:
                count, ns = count + 1, ns + min(end, reach) - start
            reach = end if reach is None else max(reach, end)
    found = _summary(path, capsys)["stream_overlap"]
    assert (found["count"], found["ns"]) == (count, ns) and count > 0


def test_overlap_line_in_summary_text(tmp_path, capsys):
    path = tmp_path / "two.pt.trace.json.gz"
    events = []
    for i, (ts, dur) in enumerate(((0, 10), (7, 10)), start=1):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts - 2, "dur": 1, "args": {"correlation": i}})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                       "args": {"device": 0, "stream": 7, "context": 1, "correlation": i}})  # fmt: skip
    with gzip.open(path, "wt") as out:
        json.dump({"traceEvents": events}, out)
    assert main(["summary", str(path)]) == 0
    text = capsys.readouterr().out
    assert "overlap on a stream: work began 1 time before the previous work on its stream ended (3 us in all" in text
