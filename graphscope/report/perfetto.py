"""Chrome trace-event JSON of an opened trace, for Perfetto UI (ui.perfetto.dev) and chrome://tracing.

One process per traced process with one thread track per CPU thread (its CUDA calls) and one per
thread's NVTX ranges; one process per GPU with a thread track per stream (kernels, copies, memsets,
whole-graph rows) and a track of its graph launches (each launch's span over its nodes, named by its
graph and node count). Complete events ('X') with microsecond timestamps from the start of the trace,
in time order on every track; a flow ('s' at the launch call, 'f' binding to the enclosing slice)
from each launch call to the first work it caused (a graph launch: to its first node). Written as a
stream: a million kernels never become a million Python dicts at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import numpy as np

from graphscope.analysis.summary import TraceAnalysis
from graphscope.core.errors import BadInputError
from graphscope.core.events import Activity
from graphscope.core.symbols import display_api_name, elide
from graphscope.trace.model import Trace
from graphscope.trace.schema import NVTX_RANGE_TYPES

GPU_PID_BASE = 1_000_000  # GPU "processes" sit above any OS pid
NVTX_TID_OFFSET = 1 << 30  # an NVTX track per thread, beside its CUDA API track
GRAPH_TID_OFFSET = 1 << 29  # per GPU, tracks of graph launches (one more per launch that overlaps another)
FORMAT_CHUNK = 50_000  # events formatted, joined and written at a time: 1M kernels took 9 s, 0.5 GiB at 200,000
CATEGORIES = {Activity.KERNEL: "kernel", Activity.MEMCPY: "memcpy", Activity.MEMSET: "memset", Activity.GRAPH: "graph"}


def write_perfetto(trace: Trace, analysis: TraceAnalysis, path: Path) -> dict[str, int]:
    """Write the trace-event JSON; returns how many events of each kind were written."""
    try:
        if path.name.endswith(".gz"):  # the name says compressed: gzip (Perfetto UI opens .json.gz)
            import gzip

            with gzip.open(path, "wt", encoding="utf-8", compresslevel=3) as out:
                return _write(trace, analysis, out)
        with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
            return _write(trace, analysis, out)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot write ({exc.strerror})") from None


def _write(trace: Trace, analysis: TraceAnalysis, out: TextIO) -> dict[str, int]:
    origin = trace.span()[0]
    counts = {"metadata": 0, "slices": 0, "flows": 0}
    out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
    first = [True]

    def emit(event: dict) -> None:
        out.write(("" if first[0] else ",\n") + json.dumps(event, separators=(",", ":")))
        first[0] = False

    def emit_lines(lines: list[str]) -> None:  # a chunk of preformatted events, written in one go
        if lines:
            out.write(("" if first[0] else ",\n") + ",\n".join(lines))
            first[0] = False

    tracks = graph_launch_tracks(analysis)  # named in the metadata, used by the launches' slices
    for event in _metadata(trace, analysis, tracks):
        emit(event)
        counts["metadata"] += 1
    api_pid, api_tid = _api_tracks(trace)
    names = trace.symbols
    api, work, launches = trace.api, analysis.work, analysis.launches
    api_name = [display_api_name(names.name(i)) for i in range(len(names))] + ["?"]
    linked = launches.first_work >= 0  # one flow per launch call, to the first work it caused
    flow_at_call = np.full(len(api), -1, dtype=np.int64)
    flow_at_call[launches.rows[linked]] = launches.first_work[linked]
    flow_at_work = np.full(len(work), -1, dtype=np.int64)
    flow_at_work[launches.first_work[linked]] = launches.rows[linked]
    quoted_api = [json.dumps(n) for n in api_name]  # each name's JSON once, not once per event
    for rows in _chunks(len(api), FORMAT_CHUNK):
        ts, dur = _us_array(api.start[rows] - origin), _us_array(api.end[rows] - api.start[rows])
        lines = []
        for row, t, d, name, pid, tid, flow in zip(
            rows.tolist(), ts, dur, api.name[rows].tolist(), api_pid[rows].tolist(), api_tid[rows].tolist(),
            flow_at_call[rows].tolist(),
        ):  # fmt: skip
            lines.append(
                f'{{"ph":"X","cat":"cuda_api","name":{quoted_api[name]},"pid":{pid},"tid":{tid},"ts":{t!r},"dur":{d!r}}}'
            )
            if flow >= 0:
                lines.append(
                    f'{{"ph":"s","cat":"launch","name":"launch","id":{row},"pid":{pid},"tid":{tid},"ts":{t!r}}}'
                )
        emit_lines(lines)
        counts["slices"] += len(rows)
    counts["slices"] += _nvtx(trace, origin, emit)
    counts["graph_launches"] = _graph_launches(analysis, tracks, origin, emit)
    counts["slices"] += counts["graph_launches"]
    kernel_names = trace.kernels.short_name
    quoted: dict[int, str] = {}
    labels = {int(kind): label for kind, label in CATEGORIES.items()}
    for rows in _chunks(len(work), FORMAT_CHUNK):
        ts, dur = _us_array(work.start[rows] - origin), _us_array(work.end[rows] - work.start[rows])
        lines = []
        for kind, source, t, d, device, stream, call in zip(
            work.kind[rows].tolist(), work.source_row[rows].tolist(), ts, dur, work.device[rows].tolist(),
            work.stream[rows].tolist(), flow_at_work[rows].tolist(),
        ):  # fmt: skip
            label = labels[kind]
            if label == "kernel":
                name_id = int(kernel_names[source])
                name = quoted.get(name_id)
                if name is None:
                    name = quoted[name_id] = json.dumps(elide(names.name(name_id), 200))
            else:
                name = f'"{label}"'
            pid = GPU_PID_BASE + device
            lines.append(
                f'{{"ph":"X","cat":"{label}","name":{name},"pid":{pid},"tid":{stream},"ts":{t!r},"dur":{d!r}}}'
            )
            if call >= 0:
                lines.append(
                    f'{{"ph":"f","bp":"e","cat":"launch","name":"launch","id":{call},"pid":{pid},"tid":{stream},'
                    f'"ts":{t!r}}}'
                )
                counts["flows"] += 1
        emit_lines(lines)
        counts["slices"] += len(rows)
    out.write("\n]}\n")
    return counts


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def _us_array(ns: np.ndarray) -> list[float]:
    """`_us` of every element, as Python floats (their repr is what json.dumps writes)."""
    return [round(v / 1000.0, 3) for v in np.asarray(ns).tolist()]


def _chunks(length: int, size: int = 200_000) -> Iterator[np.ndarray]:
    for start in range(0, length, size):
        yield np.arange(start, min(start + size, length))


def _api_tracks(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """pid and tid (OS numbers) of every CUDA API row."""
    pids = trace.processes.pid[trace.threads.process] if len(trace.threads) else np.empty(0, np.int64)
    if not len(trace.api):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return pids[trace.api.thread], trace.threads.tid[trace.api.thread]


def _metadata(trace: Trace, analysis: TraceAnalysis, tracks: np.ndarray) -> Iterator[dict]:
    names = trace.symbols
    for index in range(len(trace.processes)):
        pid = int(trace.processes.pid[index])
        yield {
            "ph": "M",
            "name": "process_name",
            "pid": pid,
            "tid": 0,
            "args": {"name": f"{names.name(int(trace.processes.name[index]))} (pid {pid})"},
        }
    for index in range(len(trace.threads)):
        pid = int(trace.processes.pid[trace.threads.process[index]])
        tid = int(trace.threads.tid[index])
        label = names.name(int(trace.threads.name[index]))
        yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"{label} CUDA API"}}
        yield {
            "ph": "M",
            "name": "thread_name",
            "pid": pid,
            "tid": tid + NVTX_TID_OFFSET,
            "args": {"name": f"{label} NVTX"},
        }
    work = analysis.work
    for device in np.unique(work.device).tolist():
        gpu = trace.gpu(device)
        yield {
            "ph": "M",
            "name": "process_name",
            "pid": GPU_PID_BASE + device,
            "tid": 0,
            "args": {"name": f"GPU {device}" + (f" {gpu.name}" if gpu else "")},
        }
        for stream in np.unique(work.stream[work.device == device]).tolist():
            yield {
                "ph": "M",
                "name": "thread_name",
                "pid": GPU_PID_BASE + device,
                "tid": stream,
                "args": {"name": f"stream {stream}"},
            }
    for device, track in sorted({(int(d), int(t)) for d, t in zip(analysis.graphs.device.tolist(), tracks.tolist())}):
        yield {
            "ph": "M",
            "name": "thread_name",
            "pid": GPU_PID_BASE + device,
            "tid": GRAPH_TID_OFFSET + track,
            "args": {"name": "graph launches" + (f" ({track + 1})" if track else "")},
        }


def graph_launch_tracks(analysis: TraceAnalysis) -> np.ndarray:
    """Per graph launch, its track on its GPU: 0, or the first track free at its start (launches on
    several streams overlap, and slices on one track must nest)."""
    graphs = analysis.graphs
    track = np.zeros(len(graphs), np.int64)
    ends: dict[int, list[int]] = {}  # device -> each track's last end
    for index in np.argsort(graphs.start, kind="stable").tolist():
        free = ends.setdefault(int(graphs.device[index]), [])
        start = int(graphs.start[index])
        at = next((k for k, end in enumerate(free) if end <= start), len(free))
        if at == len(free):
            free.append(0)
        free[at] = int(graphs.end[index])
        track[index] = at
    return track


def _graph_launches(analysis: TraceAnalysis, tracks: np.ndarray, origin: int, emit) -> int:
    graphs = analysis.graphs
    if not len(graphs):
        return 0
    for index in np.argsort(graphs.start, kind="stable").tolist():  # in time order on every track
        nodes = int(graphs.nodes[index])
        emit(
            {
                "ph": "X",
                "cat": "graph_launch",
                "name": f"graph {int(graphs.graph_id[index])}" + (f" ({nodes} nodes)" if nodes >= 0 else ""),
                "pid": GPU_PID_BASE + int(graphs.device[index]),
                "tid": GRAPH_TID_OFFSET + int(tracks[index]),
                "ts": _us(int(graphs.start[index]) - origin),
                "dur": _us(int(graphs.end[index] - graphs.start[index])),
                "args": {"launch": index + 1, "streams": int(graphs.streams[index])},
            }
        )
    return len(graphs)


def _nvtx(trace: Trace, origin: int, emit) -> int:
    nvtx = trace.nvtx
    closed = np.flatnonzero(np.isin(nvtx.event_type, NVTX_RANGE_TYPES) & (nvtx.end >= nvtx.start))
    if not len(closed) or not len(trace.threads):
        return 0
    pids = trace.processes.pid[trace.threads.process]
    for row in closed.tolist():
        thread = int(nvtx.thread[row])
        emit(
            {
                "ph": "X",
                "cat": "nvtx",
                "name": elide(trace.symbols.name(int(nvtx.text[row])), 500),
                "pid": int(pids[thread]),
                "tid": int(trace.threads.tid[thread]) + NVTX_TID_OFFSET,
                "ts": _us(int(nvtx.start[row]) - origin),
                "dur": _us(int(nvtx.end[row] - nvtx.start[row])),
            }
        )
    return len(closed)
