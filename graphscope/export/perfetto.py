"""The Perfetto export (Chrome trace-event JSON, `export/trace_events.py`) of a trace held whole: a file
open in the window, a PyTorch-profiler trace, or an export whose columns the cache maps. An Nsight
export read from its file streams instead (`export/perfetto_stream.py`).

Flows go from each launch call to the first work it caused, as the launch analysis found them; a flow's
id is its call's row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphscope.analysis.summary import TraceAnalysis
from graphscope.core import sets
from graphscope.core.events import Activity
from graphscope.core.table import Table
from graphscope.export.trace_events import GRAPH_COLUMNS, NO_FLOW, EventWriter, metadata_events, output
from graphscope.trace.model import Trace
from graphscope.trace.schema import NVTX_RANGE_TYPES


def write_perfetto(trace: Trace, analysis: TraceAnalysis, path: Path) -> dict[str, int]:
    """Write the trace-event JSON; returns how many events of each kind were written."""
    with output(path) as out:
        writer = EventWriter(out, trace.symbols)
        origin = trace.span()[0]
        work, launches = analysis.work, analysis.launches
        devices = sets.unique(work.device).tolist()
        streams = {device: sets.unique(work.stream[work.device == device]).tolist() for device in devices}
        writer.metadata(metadata_events(trace.symbols, trace.processes, trace.threads, streams, trace.gpus))
        linked = launches.first_work >= 0  # one flow per launch call, to the first work it caused
        starts = np.full(len(trace.api), NO_FLOW, dtype=np.int64)
        starts[launches.rows[linked]] = launches.rows[linked]
        ends = np.full(len(work), NO_FLOW, dtype=np.int64)
        ends[launches.first_work[linked]] = launches.rows[linked]
        api = trace.api
        pid, tid = api_tracks(trace)
        writer.api_calls(api.name, pid, tid, api.start - origin, api.end - api.start, starts)
        write_nvtx(writer, trace, origin)
        graphs = analysis.graphs
        writer.graph_launches(Table({name: getattr(graphs, name) for name in GRAPH_COLUMNS}), origin)
        names, start = work_names(trace, work), work.start
        writer.gpu_work(work.kind, names, work.device, work.stream, start - origin, work.end - start, ends)
        return writer.close()


def api_tracks(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """OS pid and tid of every CUDA API row."""
    if not len(trace.api):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    pids = trace.processes.pid[trace.threads.process]
    return pids[trace.api.thread], trace.threads.tid[trace.api.thread]


def work_names(trace: Trace, work: Table) -> np.ndarray:
    """Each work row's kernel short-name id (-1 for copies, memsets and whole-graph rows)."""
    names = np.full(len(work), -1, dtype=np.int64)
    kernels = work.kind == Activity.KERNEL
    names[kernels] = trace.kernels.short_name[work.source_row[kernels]]
    return names


def write_nvtx(writer: EventWriter, trace: Trace, origin: int) -> None:
    """The trace's closed NVTX ranges on their threads' NVTX tracks."""
    nvtx = trace.nvtx
    closed = np.flatnonzero(sets.isin(nvtx.event_type, NVTX_RANGE_TYPES) & (nvtx.end >= nvtx.start))
    if not len(closed) or not len(trace.threads):
        return
    thread = nvtx.thread[closed]
    pid = trace.processes.pid[trace.threads.process][thread]
    start = nvtx.start[closed]
    writer.nvtx_ranges(nvtx.text[closed], pid, trace.threads.tid[thread], start - origin, nvtx.end[closed] - start)
