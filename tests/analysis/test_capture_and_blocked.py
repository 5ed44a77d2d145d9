"""Verdicts that hold on a saturated GPU and during a capture (issue 42, items 1, 2 and 7).

Every number is checked a second way: plain SQL over the export (or plain JSON over a hand-made trace)."""

from __future__ import annotations

import gzip
import json
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graphscope.analysis.nvtx_table import nvtx_table
from graphscope.analysis.scope import nvtx_scope
from graphscope.analysis.summary import analyze, summarize
from graphscope.analysis.verdict import ALL_CAPTURE, HOST_WAIT
from graphscope.cli import main
from graphscope.core.events import (
    CAPTURE_BEGIN_PREFIXES,
    CAPTURE_END_PREFIXES,
    GRAPH_LAUNCH_PREFIXES,
    HIP_KERNEL_LAUNCH_PREFIXES,
    KERNEL_LAUNCH_PREFIXES,
    ApiKind,
)
from graphscope.core.rules import BLOCKED_FACTOR, BLOCKED_MIN_NS, GPU_BOUND_HOST_WAIT
from graphscope.text.summary import render_summary
from graphscope.trace import load_trace
from graphscope.trace.schema import classify_api
from tests.conftest import H200_NODE, union_ns

DOCS = Path(__file__).resolve().parents[2] / "docs" / "counting.md"
RUNTIME, KERNEL = "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"
LAUNCH_SQL = "(s.value LIKE 'cuLaunchKernel%' OR s.value LIKE 'cudaLaunchKernel%')"


def _launch_calls(conn: sqlite3.Connection) -> list[tuple[int, int, int, int]]:
    """(rowid, start, end, correlationId) of every kernel-launch call, in start order."""
    return conn.execute(
        f"SELECT r.rowid, r.start, r.end, r.correlationId FROM {RUNTIME} r JOIN StringIds s ON s.id = r.nameId "
        f"WHERE {LAUNCH_SQL} ORDER BY r.start"
    ).fetchall()


def _capture_bracket(conn: sqlite3.Connection) -> tuple[int, int]:
    return conn.execute(
        f"SELECT (SELECT r.start FROM {RUNTIME} r JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaStreamBeginCapture%'), (SELECT r.start FROM "
        f"{RUNTIME} r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaStreamEndCapture%')"
    ).fetchone()


# -- item 2: capture in an Nsight export --------------------------------------------------------------


def test_the_seed_trace_counts_its_capture_apart_by_sql():
    """The demo: 1,000 cuLaunchKernel calls inside `capture` (between cudaStreamBeginCapture and
    cudaStreamEndCapture) are capture, not eager; the eager ratio is what remains, by SQL."""
    conn = sqlite3.connect(H200_NODE)
    calls = _launch_calls(conn)
    begin, end = _capture_bracket(conn)
    captured = [c for c in calls if begin <= c[1] <= end]
    with_kernels = {c for (c,) in conn.execute(f"SELECT DISTINCT correlationId FROM {KERNEL}")}
    assert len(captured) == 1000 and not any(c[3] in with_kernels for c in captured)
    eager = [c for c in calls if not begin <= c[1] <= end]
    # the one-off first calls: the first launch of each of the four kernels
    first = conn.execute(
        f"SELECT r.rowid, min(r.start) FROM {RUNTIME} r JOIN {KERNEL} k ON k.correlationId = r.correlationId "
        "GROUP BY k.shortName"
    ).fetchall()
    one_off = {rowid for rowid, _ in first}
    steady = [c for c in eager if c[0] not in one_off]
    kernels = conn.execute(
        f"SELECT k.start, k.end FROM {KERNEL} k WHERE k.correlationId NOT IN "
        f"(SELECT correlationId FROM {RUNTIME} WHERE rowid IN ({','.join(map(str, one_off))})) ORDER BY k.start"
    ).fetchall()
    busy = union_ns(kernels)
    conn.close()

    summary = summarize(load_trace(H200_NODE))
    steady_state = summary["launch"]["steady_state"]
    assert summary["launch"]["median_api_ns"] == np.median([c[2] - c[1] for c in eager])  # capture calls apart
    assert summary["api"]["launches"] == len(calls) == 5005  # every call counted
    assert steady_state["capture_calls"] == 1000
    assert steady_state["capture_ns"] == sum(c[2] - c[1] for c in captured)
    assert steady_state["eager_launch_calls"] == len(steady) == 4001  # was 5,001 with the capture counted
    assert steady_state["eager_launch_ns"] == sum(c[2] - c[1] for c in steady)
    assert steady_state["gpu_busy_ns"] == busy
    ratio = sum(c[2] - c[1] for c in steady) / busy
    assert steady_state["eager_overhead_ratio"] == pytest.approx(ratio, abs=1e-6)
    verdict = summary["launch"]["verdict"]
    assert f"{len(steady):,} eager launch calls remain" in verdict and f"{ratio:.0%}" in verdict
    assert "1,000 launch calls inside stream captures" in verdict
    text = render_summary(summary)
    assert re.search(r"capture\s+1,000 launch calls, 2\.31 ms", text)


def test_a_scope_that_only_captures_says_so_and_its_ratio_is_undefined(capsys):
    trace = load_trace(H200_NODE)
    launch = summarize(trace, scope=nvtx_scope(trace, "capture"))["launch"]
    assert launch["launch_bound"] is None and launch["judged"] is None
    assert launch["verdict"].startswith(ALL_CAPTURE) and "1,000 launch calls" in launch["verdict"]
    rows = {r["name"]: r for r in nvtx_table(trace, analyze(trace))}
    assert rows["capture"]["gpu_busy_ns"] == 0 and rows["capture"]["overhead_ratio"] is None
    assert rows["capture"]["capture_calls"] == 1000 and rows["capture"]["launch_calls"] == 0
    assert rows["eager_0"]["overhead_ratio"] > 1
    assert main(["summary", str(H200_NODE), "--by-nvtx", "--json"]) == 0
    ranges = {r["name"]: r for r in json.loads(capsys.readouterr().out)["nvtx_ranges"]}
    assert ranges["capture"]["overhead_ratio"] is None  # JSON null, never 0.0
    assert main(["summary", str(H200_NODE), "--by-nvtx"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("NVTX ranges") :].splitlines()
    line = next(x for x in table if x.strip().startswith("capture "))
    assert line.split()[-1] == "-" and "0.00" not in line


# -- item 2: capture in a PyTorch-profiler trace, built by hand -----------------------------------------


def _kineto(path: Path, events: list[dict]) -> Path:
    with gzip.open(path, "wt") as stream:
        json.dump({"traceEvents": events}, stream)
    return path


class _Events(list):
    def api(self, name: str, ts: float, dur: float, corr: int, tid: int = 1) -> None:
        cpu = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 10, "tid": tid, "ts": ts, "dur": dur}
        self.append({**cpu, "args": {"correlation": corr}})

    def kernel(self, ts: float, dur: float, corr: int, name: str = "k") -> None:
        gpu = {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur}
        self.append({**gpu, "args": {"device": 0, "stream": 7, "correlation": corr}})


def test_a_hip_capture_in_a_kineto_trace_is_capture_per_thread(tmp_path):
    """12 eager hipLaunchKernel; 5 inside hipStreamBeginCapture/EndCapture on thread 1, while thread 2
    launches eagerly (its kernel ran: it stays eager); one hipGraphLaunch replays the 5."""
    events = _Events()
    t = 0.0
    for i in range(12):
        events.api("hipLaunchKernel", t, 5, i + 1)
        events.kernel(t + 10, 2, i + 1)
        t += 20
    events.api("hipStreamBeginCapture", t, 3, 99)
    t += 5
    for i in range(5):
        events.api("hipLaunchKernel", t, 4, 100 + i)
        t += 10
    events.api("hipLaunchKernel", t - 30, 5, 200, tid=2)
    events.kernel(t - 20, 2, 200)
    events.api("hipStreamEndCapture", t, 3, 150)
    events.api("hipLaunchKernel", t + 5, 5, 160)  # after the end: eager again
    events.kernel(t + 12, 2, 160)
    t += 20
    events.api("hipGraphLaunch", t, 8, 300)
    for i in range(5):
        events.kernel(t + 10 + 3 * i, 2, 300, name=f"g{i}")
    path = _kineto(tmp_path / "capture.json.gz", events)
    # the second way: plain JSON, per thread, begin..end
    launches = [e for e in events if e["name"] == "hipLaunchKernel"]
    begin = next(e["ts"] for e in events if e["name"] == "hipStreamBeginCapture")
    end = next(e["ts"] for e in events if e["name"] == "hipStreamEndCapture")
    inside = [e for e in launches if e["tid"] == 1 and begin <= e["ts"] <= end]
    steady = summarize(load_trace(path), whole=True)["launch"]["steady_state"]
    assert steady["capture_calls"] == len(inside) == 5
    assert steady["capture_ns"] == sum(round(e["dur"] * 1000) for e in inside)
    assert steady["eager_launch_calls"] == len(launches) - len(inside) == 14
    assert steady["graph_launch_calls"] == 1 and steady["calls_without_work"] == 0


def test_a_kineto_trace_of_a_capture_alone_is_not_judged(tmp_path):
    events = _Events()
    events.api("hipStreamBeginCapture", 0, 3, 1)
    for i in range(20):
        events.api("hipExtModuleLaunchKernel", 5 + 10 * i, 4, 10 + i)
    events.api("hipStreamEndCapture", 300, 3, 50)
    summary = summarize(load_trace(_kineto(tmp_path / "alone.json.gz", events)), whole=True)
    launch = summary["launch"]
    assert launch["launch_bound"] is None and launch["verdict"].startswith(ALL_CAPTURE)
    assert launch["steady_state"]["capture_calls"] == 20 and "20 launch calls" in launch["verdict"]
    assert summary["api"]["launches"] == 20  # counted, as every launch call is
    text = render_summary(summary)
    assert re.search(r"median launch call\s+-\n", text) and re.search(r"capture\s+20 launch calls, 80 us", text)


def test_captures_nest_and_an_end_without_a_begin_closes_one_open_from_the_start(tmp_path):
    events = _Events()
    events.api("cudaLaunchKernel", 0, 4, 1)  # before an end with no begin: captured from the trace's start
    events.api("cudaStreamEndCapture", 10, 2, 2)
    events.api("cudaStreamBeginCapture", 20, 2, 3)
    events.api("cuStreamBeginCapture_v2", 30, 2, 4)  # a second stream, same thread
    events.api("cudaStreamEndCapture", 40, 2, 5)
    events.api("cuLaunchKernel", 50, 4, 6)  # the second capture is still open
    events.api("cudaStreamEndCapture", 60, 2, 7)
    events.api("cudaLaunchKernel", 70, 4, 8)  # none open, but it ran nothing: without work
    steady = summarize(load_trace(_kineto(tmp_path / "nest.json.gz", events)), whole=True)["launch"]["steady_state"]
    assert steady["capture_calls"] == 2 and steady["calls_without_work"] == 1
    assert steady["without_work_by_name"] == {"cudaLaunchKernel": 1}


# -- item 1: a saturated GPU whose launch calls block ----------------------------------------------------


KERNEL_NS = 2_000_000


def saturate(conn: sqlite3.Connection, seed: int = 42) -> dict[str, object]:
    """The issue's case made from a shipped export: one eager launch call in ten stretched to 1-50 ms (the
    CPU after it shifted by as much), the kernels of one in fifty deleted (launch calls without work), and
    every kernel made back to back: it starts after its launch call and at least KERNEL_NS after the kernel
    before, and runs until the next starts (the GPU always busy, mostly behind the CPU). Returns what was
    done."""
    rng = random.Random(seed)
    calls = _launch_calls(conn)
    worked = {c for (c,) in conn.execute(f"SELECT DISTINCT correlationId FROM {KERNEL}")}
    first = {r for (r,) in conn.execute(
        f"SELECT r.rowid FROM {RUNTIME} r JOIN {KERNEL} k ON k.correlationId = r.correlationId "
        "GROUP BY k.shortName HAVING r.start = min(r.start)"
    )}  # fmt: skip
    eager = [c for c in calls if c[3] in worked and c[0] not in first]
    stretched = {c[0]: rng.randint(1_000_000, 50_000_000) for i, c in enumerate(eager) if i % 10 == 5}
    dropped = [c for i, c in enumerate(eager) if i % 50 == 7]
    conn.executemany(f"DELETE FROM {KERNEL} WHERE correlationId = ?", [(c[3],) for c in dropped])
    extra = sorted((end, stretched[rowid] - (end - start)) for rowid, start, end, _ in eager if rowid in stretched)
    ends = np.array([e for e, _ in extra], dtype=np.int64)
    total = np.concatenate([[0], np.cumsum([x for _, x in extra])])

    def shift(t: np.ndarray) -> np.ndarray:  # the CPU's delay at t: the extra time of the calls ended by t
        return t + total[np.searchsorted(ends, t, side="right")]

    for table in (RUNTIME, "NVTX_EVENTS", "CUDA_GRAPH_NODE_EVENTS", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        rows = conn.execute(f"SELECT rowid, start, coalesce(end, -1) FROM {table}").fetchall()
        rowid, start, end = (np.array(col, dtype=np.int64) for col in zip(*rows))
        new_end = np.where(end >= 0, shift(end), -1)
        conn.executemany(
            f"UPDATE {table} SET start = ?, end = nullif(?, -1) WHERE rowid = ?",
            zip(shift(start).tolist(), new_end.tolist(), rowid.tolist()),
        )
    call_start = dict(conn.execute(f"SELECT correlationId, start FROM {RUNTIME}"))
    kernels = conn.execute(f"SELECT rowid, correlationId FROM {KERNEL} ORDER BY start").fetchall()
    starts = np.empty(len(kernels) + 1, dtype=np.int64)
    previous = -(2**62)
    for k, (_, correlation) in enumerate(kernels):  # each after its call and at least KERNEL_NS after the last
        previous = starts[k] = max(call_start[correlation] + 1_000, previous + KERNEL_NS)
    starts[-1] = previous + KERNEL_NS
    conn.executemany(  # each runs until the next starts: back to back
        f"UPDATE {KERNEL} SET start = ?, end = ? WHERE rowid = ?",
        zip(starts[:-1].tolist(), starts[1:].tolist(), [r for r, _ in kernels]),
    )
    conn.commit()
    return {"stretched": stretched, "dropped": len(dropped)}


def test_a_saturated_gpu_with_blocking_launch_calls_is_gpu_bound(export_copy):
    path, conn = export_copy(H200_NODE)
    done = saturate(conn)
    # the second way, by SQL over the mutated export
    span_start = conn.execute(
        f"SELECT min(m) FROM (SELECT min(start) m FROM {RUNTIME} UNION SELECT min(start) FROM {KERNEL} "
        "UNION SELECT min(start) FROM NVTX_EVENTS)"
    ).fetchone()[0]
    first_kernel, last_kernel = conn.execute(f"SELECT min(start), max(end) FROM {KERNEL}").fetchone()
    last_cpu = conn.execute(f"SELECT max(end) FROM {RUNTIME}").fetchone()[0]
    assert last_kernel > last_cpu  # the CPU ran ahead of the GPU to the end
    host_wait, wall = first_kernel - span_start, last_kernel - span_start  # the one idle stretch: start-up
    calls = _launch_calls(conn)
    begin, end = _capture_bracket(conn)
    worked = {c for (c,) in conn.execute(f"SELECT DISTINCT correlationId FROM {KERNEL}")}
    one_off = {r for (r,) in conn.execute(
        f"SELECT r.rowid FROM {RUNTIME} r JOIN {KERNEL} k ON k.correlationId = r.correlationId "
        "GROUP BY k.shortName HAVING r.start = min(r.start)"
    )}  # fmt: skip
    without = [c for c in calls if c[3] not in worked and not begin <= c[1] <= end]
    steady = [c for c in calls if c[3] in worked and c[0] not in one_off]
    median = int(np.median([c[2] - c[1] for c in steady]))
    blocked = [
        c
        for c in steady
        if c[2] - c[1] > BLOCKED_FACTOR * median
        and c[2] - c[1] > BLOCKED_MIN_NS
        and conn.execute(f"SELECT count(*) FROM {KERNEL} WHERE end BETWEEN ? AND ?", (c[1], c[2])).fetchone()[0]
    ]
    assert 0 < len(blocked) <= len(done["stretched"]) and all(c[0] in done["stretched"] for c in blocked)

    summary = summarize(load_trace(path))
    launch, steady_state = summary["launch"], summary["launch"]["steady_state"]
    assert launch["overhead_ratio"] > 0.15  # the old rule: "launch-bound ... CUDA graphs should pay"
    assert summary["gpu"][0]["host_wait_idle_ns"] == host_wait and summary["gpu"][0]["busy_ns"] + host_wait == wall
    share = host_wait / wall
    assert share < GPU_BOUND_HOST_WAIT and summary["gpu"][0]["utilization"] > 0.95
    assert launch["launch_bound"] is False
    assert launch["verdict"].startswith("GPU-bound: the GPU never waited for the CPU (")
    assert "CUDA graphs should pay" not in launch["verdict"]
    gpu = summary["gpu"][0]  # judged from the first kernel to the last: the start-up is not waiting
    assert gpu["active_ns"] == last_kernel - first_kernel and gpu["active_host_wait_ns"] == 0
    assert launch["judged"] == {"label": HOST_WAIT, "value": 0.0}
    assert steady_state["blocked_calls"] == len(blocked)
    assert abs(steady_state["blocked_ns"] - sum(c[2] - c[1] - median for c in blocked)) <= len(blocked)
    assert (
        steady_state["submit_ns"]
        == steady_state["eager_launch_ns"] + steady_state["graph_launch_ns"] - (steady_state["blocked_ns"])
    )
    assert steady_state["calls_without_work"] == len(without) == done["dropped"]
    assert steady_state["without_work_by_name"] == {"cuLaunchKernel": len(without)}
    assert steady_state["without_work_ns"] == sum(c[2] - c[1] for c in without)
    assert f"Not counted: {len(without)} launch calls with no GPU work" in launch["verdict"]
    text = render_summary(summary)
    assert launch["verdict"] in text
    assert re.search(rf"blocked\s+{len(blocked)} launch calls", text)
    assert re.search(rf"without GPU work\s+{len(without)} launch calls", text)


def test_each_gpu_of_an_export_is_judged_gpu_bound_on_its_own_waiting(tmp_path):
    """Device 0 always busy from 10 us on (GPU-bound), device 1 waiting between 0.5 us kernels (launch-bound):
    each GPU's verdict follows its own idle waiting for the CPU, the whole trace's both."""
    events = _Events()
    for i in range(40):
        events.api("cudaLaunchKernel", 10 * i, 4, 2 * i + 1)
        events.kernel(10 + 10 * i, 10, 2 * i + 1, name="busy")  # back to back on device 0
        events.api("cudaLaunchKernel", 10 * i + 5, 4, 2 * i + 2)
        events.kernel(10 * i + 9.5, 0.5, 2 * i + 2, name="short")
        events[-1]["args"]["device"] = 1
    summary = summarize(load_trace(_kineto(tmp_path / "two.json.gz", events)), whole=True)
    gpus = {g["device"]: g for g in summary["gpu"]}
    assert gpus[0]["host_wait_idle_ns"] == 10_000 and gpus[0]["busy_ns"] == 400_000  # by hand: [0, 10 us)
    assert gpus[0]["launch"]["launch_bound"] is False and gpus[0]["launch"]["verdict"].startswith("GPU-bound")
    assert gpus[1]["launch"]["launch_bound"] is True and gpus[1]["launch"]["verdict"].startswith("launch-bound")
    waited = (10_000 + gpus[1]["host_wait_idle_ns"]) / (2 * 410_000)
    assert waited > GPU_BOUND_HOST_WAIT and summary["launch"]["launch_bound"] is True


def test_slow_calls_while_the_gpu_made_no_progress_are_not_blocked(tmp_path):
    """A launch call 80x the median (400 us) is blocked only if some GPU work ended while it ran."""

    def slow_call(previous_kernel_us: float) -> dict:
        events = _Events()
        for i in range(30):
            slow = i == 20  # 20,000-20,400 us; the kernel of the call before runs from 19,010 us
            events.api("cudaLaunchKernel", 1000 * i, 400 if slow else 5, i + 1)
            events.kernel(1000 * i + (401 if slow else 10), previous_kernel_us if i == 19 else 2, i + 1)
        path = _kineto(tmp_path / f"slow{previous_kernel_us}.json.gz", events)
        return summarize(load_trace(path), whole=True)["launch"]["steady_state"]

    assert slow_call(2)["blocked_calls"] == 0  # ended at 19,012 us, before the call began: no progress
    progressed = slow_call(1200)  # ends at 20,210 us, while the call runs
    assert progressed["blocked_calls"] == 1 and progressed["blocked_ns"] == 400_000 - 5_000
    assert progressed["submit_ns"] == progressed["eager_launch_ns"] - 395_000


# -- item 7: the documented launch names are the code's ---------------------------------------------------


def _documented(heading: str) -> list[str]:
    """The names listed after `heading` in docs/counting.md (its list item's code spans)."""
    text = DOCS.read_text()
    start = text.index(heading)
    item = re.split(r"\n\s*\n|\n\s*- ", text[start:], maxsplit=1)[0]
    return re.findall(r"`([A-Za-z_]+)`", item)


def test_counting_md_lists_every_launch_name_the_code_counts():
    kernel = _documented("Kernel-launch calls:")
    graph = _documented("Graph-launch calls:")
    begin, end = _documented("Capture begins:"), _documented("Capture ends:")
    assert sorted(kernel) == sorted(KERNEL_LAUNCH_PREFIXES + HIP_KERNEL_LAUNCH_PREFIXES)
    assert "hipExtModuleLaunchKernel" in kernel
    assert sorted(graph) == sorted(GRAPH_LAUNCH_PREFIXES)
    assert sorted(begin) == sorted(CAPTURE_BEGIN_PREFIXES) and sorted(end) == sorted(CAPTURE_END_PREFIXES)
    for name in kernel:
        assert classify_api(name) == ApiKind.KERNEL_LAUNCH and classify_api(name + "_v7000") == ApiKind.KERNEL_LAUNCH
    for name in graph:
        assert classify_api(name) == ApiKind.GRAPH_LAUNCH
    assert classify_api("cudaLaunchKernelExC") == ApiKind.KERNEL_LAUNCH  # a prefix: its variants count
    assert classify_api("hipLaunchCooperativeKernel") != ApiKind.KERNEL_LAUNCH  # a name not listed does not


