"""The Perfetto export of an Nsight Systems export read from its file a window of time at a time
(`trace/windowed.py`): memory follows the window, not the file, and the libraries of the fast reader are
never loaded. The output is what `export/perfetto.py` writes for the trace held whole, but for the
flows' ids (a flow here is named by its call's (process, correlationId) key) and the place of the
graph-launch tracks (after the CUDA calls and NVTX ranges, since a launch may span windows).

One pass over a few columns comes first (`export/flow_keys.py`): which (process, correlationId) keys both
a launch call and some GPU work carry, the file's threads, processes and streams. Then each window's CUDA calls,
NVTX ranges (the first window's) and GPU work are written in time order; a flow starts at the first
launch call of a key and ends at the key's first work, whichever windows they fall in. Graph launches
are gathered as (launch, stream) parts window by window and written at the end.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphscope.analysis.correlation import correlate
from graphscope.analysis.gpu_time import gpu_work, work_column
from graphscope.analysis.graphs import launch_parts, launches_of_parts, node_activities
from graphscope.analysis.launch import api_kinds
from graphscope.core import sets
from graphscope.core.events import call_key
from graphscope.core.table import Table
from graphscope.export.flow_keys import ENDED, LAUNCH_KINDS, STARTED, FlowKeys
from graphscope.export.perfetto import api_tracks, work_names, write_nvtx
from graphscope.export.trace_events import GRAPH_COLUMNS, NO_FLOW, EventWriter, metadata_events, output
from graphscope.trace.model import Trace
from graphscope.trace.windowed import WindowedExport

EVENTS_PER_WINDOW = 100_000


def export_perfetto(path: Path, target: Path) -> dict[str, int] | None:
    """Write the trace-event JSON of the export at `path` to `target`; how many events of each kind were
    written, or None (nothing written) when the file cannot be read in windows."""
    with WindowedExport(path, EVENTS_PER_WINDOW) as source:
        if source.windows is None:
            return None
        flows = FlowKeys(source)
        origin = source.origin()
        symbols = source.symbols
        graphs: list[Table] = []
        with output(target) as out:
            writer = EventWriter(out, symbols)
            for number, trace in enumerate(source.traces()):
                if number == 0:
                    _write_metadata(writer, source, flows, trace)
                numbers = flows.numbers(trace.processes.key)
                api = trace.api
                pid, tid = api_tracks(trace)
                launch = sets.isin(api_kinds(symbols, api.name), LAUNCH_KINDS)
                flow = _flow_ids(flows, numbers[api.process], api.correlation, launch, STARTED)
                writer.api_calls(api.name, pid, tid, api.start - origin, api.end - api.start, flow)
                write_nvtx(writer, trace, origin)
                work = gpu_work(trace, correlate(trace))
                correlation = work_column(trace, work, "correlation")
                flow = _flow_ids(flows, numbers[work.process], correlation, correlation >= 0, ENDED, work.start)
                kind, device, stream, start = work.kind, work.device, work.stream, work.start
                writer.gpu_work(kind, work_names(trace, work), device, stream, start - origin, work.end - start, flow)
                graphs += _graph_parts(trace, numbers)
            writer.graph_launches(_graph_launches(graphs), origin)
            return writer.close()


def _write_metadata(writer: EventWriter, source: WindowedExport, flows: FlowKeys, first: Trace) -> None:
    """Every process, thread, GPU and stream of the file (threads with NVTX ranges from the first window,
    which holds them all)."""
    nvtx_tids = first.threads.global_tid[first.nvtx.thread] if len(first.nvtx) else np.empty(0, np.int64)
    tids = sets.union(np.fromiter(flows.global_tids, np.int64), nvtx_tids.astype(np.int64))
    pids = np.fromiter(flows.global_pids, np.int64)
    processes, threads = source.processes_and_threads(tids, pids)
    streams = {device: sorted(found) for device, found in flows.streams.items()}
    writer.metadata(metadata_events(source.symbols, processes, threads, streams, source.gpus()))


def _graph_parts(trace: Trace, numbers: np.ndarray) -> list[Table]:
    """This window's graph launches: its node activities grouped by (launch, stream) as `launch_parts`,
    and its whole-graph rows as launches."""
    found = []
    nodes = node_activities(trace)
    if len(nodes):
        found.append(launch_parts(nodes, call_key(numbers[nodes.process], nodes.correlation)))
    whole = trace.graph_launches
    if len(whole):
        ones = np.ones(len(whole), np.int64)
        found.append(Table({"start": whole.start, "end": whole.end, "nodes": -ones, "graph_id": whole.graph_id,
                            "streams": ones, "device": whole.device}))  # fmt: skip
    return found


def _graph_launches(found: list[Table]) -> Table:
    """The file's graph launches from every window's: parts of the same (launch, stream) joined."""
    parts = [table for table in found if "key" in table]
    launches = [Table({name: table[name] for name in GRAPH_COLUMNS}) for table in found if "key" not in table]
    if parts:
        joined = Table({name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
        grouped = launches_of_parts(launch_parts(joined, joined.key, joined["count"]))
        launches.append(Table({name: grouped[name] for name in GRAPH_COLUMNS}))
    if not launches:
        return Table.empty(dict.fromkeys(GRAPH_COLUMNS, np.int64))
    return Table({name: np.concatenate([table[name] for table in launches]) for name in GRAPH_COLUMNS})


def _flow_ids(
    flows: FlowKeys, numbers: np.ndarray, correlation: np.ndarray, candidates: np.ndarray, written: int,
    starts: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Per row, the id of the flow it starts or ends (its key: `call_key` of process number and correlation
    id), NO_FLOW for the others (`FlowKeys.first`)."""
    flow = np.full(len(correlation), NO_FLOW, np.int64)
    chosen = flows.first(numbers, correlation, candidates, written, starts)
    flow[chosen] = call_key(numbers[chosen], correlation[chosen])
    return flow
