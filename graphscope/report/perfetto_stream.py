"""The Perfetto export of an Nsight Systems export read from its file a window of time at a time
(`trace/windowed.py`): memory follows the window, not the file, and the libraries of the fast reader are
never loaded. The output is what `report/perfetto.py` writes for the trace held whole, but for the
flows' ids (a flow here is named by its call's (process, correlationId) key) and the place of the
graph-launch tracks (after the CUDA calls and NVTX ranges, since a launch may span windows).

One pass over a few columns comes first (`FlowKeys`): which (process, correlationId) keys both a launch
call and some GPU work carry, the file's threads, processes and streams (and, in a file whose work rows
are out of start order, a second pass for each key's first work start). Then each window's CUDA calls,
NVTX ranges (the first window's) and GPU work are written in time order; a flow starts at the first
launch call of a key and ends at the key's first work, whichever windows they fall in. Graph launches
are gathered as (launch, stream) parts window by window and written at the end.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from graphscope.analysis.correlation import correlate
from graphscope.analysis.gpu_time import gpu_work, work_column
from graphscope.analysis.graphs import launch_parts, launches_of_parts, node_activities
from graphscope.analysis.launch import api_kinds
from graphscope.core.events import GPU_WORK, ApiKind, call_key
from graphscope.core.table import Table
from graphscope.report.perfetto import api_tracks, work_names, write_nvtx
from graphscope.report.trace_events import NO_FLOW, EventWriter, metadata_events, output
from graphscope.trace import entities
from graphscope.trace.model import Trace
from graphscope.trace.windowed import WindowedExport

EVENTS_PER_WINDOW = 100_000
LAUNCH_KINDS = (int(ApiKind.KERNEL_LAUNCH), int(ApiKind.GRAPH_LAUNCH))
WORK_TABLES = tuple(kind.table for kind in GPU_WORK)
GRAPH_COLUMNS = ("start", "end", "nodes", "graph_id", "streams", "device")


class FlowKeys:
    """What the whole file says before any window is written: the (process, correlationId) keys that make
    flows, sorted, with whether each flow's start and end were written yet; the file's threads (globalTid),
    processes (globalPid) and each GPU's streams. Processes are numbered in the order first met."""

    def __init__(self, source: WindowedExport) -> None:
        self._ordinals: dict[int, int] = {}
        self.global_tids: set[int] = set()
        self.global_pids: set[int] = set()
        self.streams: dict[int, set[int]] = defaultdict(set)
        found, in_order = [], True
        for table in WORK_TABLES:
            last = np.iinfo(np.int64).min
            for columns in source.columns(table, ("global_pid", "correlation", "device", "stream", "start")):
                self.global_pids.update(entities.distinct(columns["global_pid"]).tolist())
                pairs = np.unique(np.stack([columns["device"], columns["stream"]], axis=1), axis=0)
                for device, stream in pairs.tolist():
                    self.streams[device].add(stream)
                keys = self.keys(entities.process_key(columns["global_pid"]), columns["correlation"])
                found.append(keys[columns["correlation"] >= 0])
                start = columns["start"]
                in_order = in_order and bool(len(start) == 0 or (start[0] >= last and np.all(start[1:] >= start[:-1])))
                last = int(start[-1]) if len(start) else last
        worked = _sorted_unique(found)
        flowing = np.zeros(len(worked), bool)
        for columns in source.columns("api", ("global_tid", "correlation", "name")):
            self.global_tids.update(entities.distinct(columns["global_tid"]).tolist())
            launch = np.isin(api_kinds(source.symbols, columns["name"]), LAUNCH_KINDS) & (columns["correlation"] >= 0)
            keys = self.keys(entities.process_key(columns["global_tid"][launch]), columns["correlation"][launch])
            flowing[_positions(worked, keys)[0]] = True
        self.flowing = worked[flowing]
        self.started = np.zeros(len(self.flowing), bool)
        self.ended = np.zeros(len(self.flowing), bool)
        self.first_start = None if in_order else self._first_starts(source)

    def _first_starts(self, source: WindowedExport) -> np.ndarray:
        """Each flowing key's earliest work start: in a file whose work rows are out of start order (a
        renumbered one), a key's first work may come in a later window than some other work of it."""
        first = np.full(len(self.flowing), np.iinfo(np.int64).max, np.int64)
        for table in WORK_TABLES:
            for columns in source.columns(table, ("global_pid", "correlation", "start")):
                keys = self.keys(entities.process_key(columns["global_pid"]), columns["correlation"])
                at, found = _positions(self.flowing, keys)
                np.minimum.at(first, at, columns["start"][found])
        return first

    def ordinals(self, process_keys: np.ndarray) -> np.ndarray:
        """Each process key's number (a new key gets the next)."""
        known = self._ordinals
        return np.array([known.setdefault(k, len(known)) for k in process_keys.tolist()], dtype=np.int64)

    def keys(self, process_keys: np.ndarray, correlation: np.ndarray) -> np.ndarray:
        """`call_key` of (process number, correlationId) per row."""
        if not len(process_keys):
            return np.empty(0, np.int64)
        distinct = entities.sorted_distinct(process_keys)
        numbers = self.ordinals(distinct)
        return call_key(numbers[np.searchsorted(distinct, process_keys)], correlation)

    def first(
        self, keys: np.ndarray, candidates: np.ndarray, written: np.ndarray, starts: np.ndarray | None = None
    ) -> np.ndarray:
        """A flow id for each row (in time order) that is the first candidate of a flowing key not yet
        `written`, NO_FLOW for the others; marks those keys written. With `starts` (work rows), a row must
        also start when its key's first work does."""
        flow = np.full(len(keys), NO_FLOW, np.int64)
        rows = np.flatnonzero(candidates)
        at, found = _positions(self.flowing, keys[rows])
        rows = rows[found]
        fresh = ~written[at]
        if starts is not None and self.first_start is not None:
            fresh &= starts[rows] == self.first_start[at]
        at, rows = at[fresh], rows[fresh]
        _, first = np.unique(at, return_index=True)  # a key twice in this window: its first row
        written[at[first]] = True
        flow[rows[first]] = keys[rows[first]]
        return flow


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
            writer = EventWriter(out)
            for number, trace in enumerate(source.traces()):
                if number == 0:
                    _write_metadata(writer, source, flows, trace)
                numbers = flows.ordinals(trace.processes.key)
                api = trace.api
                pid, tid = api_tracks(trace)
                launch = np.isin(api_kinds(symbols, api.name), LAUNCH_KINDS) & (api.correlation >= 0)
                keys = call_key(numbers[api.process], api.correlation) if len(api) else np.empty(0, np.int64)
                flow = flows.first(keys, launch, flows.started)
                writer.api_calls(symbols, api.name, pid, tid, api.start - origin, api.end - api.start, flow)
                write_nvtx(writer, trace, origin)
                work = gpu_work(trace, correlate(trace))
                correlation = work_column(trace, work, "correlation")
                keys = call_key(numbers[work.process], correlation) if len(work) else np.empty(0, np.int64)
                flow = flows.first(keys, correlation >= 0, flows.ended, work.start)
                kind, device, stream, start = work.kind, work.device, work.stream, work.start
                writer.gpu_work(
                    symbols, kind, work_names(trace, work), device, stream, start - origin, work.end - start, flow
                )
                graphs += _graph_parts(trace, numbers)
            writer.graph_launches(_graph_launches(graphs), origin)
            return writer.close()


def _write_metadata(writer: EventWriter, source: WindowedExport, flows: FlowKeys, first: Trace) -> None:
    """Every process, thread, GPU and stream of the file (threads with NVTX ranges from the first window,
    which holds them all)."""
    nvtx_tids = first.threads.global_tid[first.nvtx.thread] if len(first.nvtx) else np.empty(0, np.int64)
    tids = np.union1d(np.fromiter(flows.global_tids, np.int64), nvtx_tids.astype(np.int64))
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


def _sorted_unique(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct values of several int64 arrays, sorted (one sort in place: NumPy's hash-based unique
    took 4 s for 1M distinct keys)."""
    values = np.concatenate(parts) if parts else np.empty(0, np.int64)
    parts.clear()
    values.sort()
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def _positions(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `keys` sits in `sorted_keys`, for those found; and which were found."""
    at = np.searchsorted(sorted_keys, keys)
    found = at < len(sorted_keys)
    found[found] = sorted_keys[at[found]] == keys[found]
    return at[found], found
