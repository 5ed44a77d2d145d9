"""CUDA graph launches seen on the GPU: per launch span and node count, per node durations over launches."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis.correlation import Correlation
from graphscope.analysis.kernel_stats import grouped_stats
from graphscope.core.events import NODE_WORK, Activity, call_key, graph_of, pair_key
from graphscope.core.table import Table
from graphscope.trace.model import Trace


def node_activities(trace: Trace) -> Table:
    """Every GPU row that executed a graph node (node trace mode): kind, row, process, correlation, node, times."""
    parts = []
    for kind in NODE_WORK:
        table = getattr(trace, kind.table)
        rows = np.flatnonzero(table.graph_node >= 0) if len(table) else np.empty(0, np.int64)
        if len(rows):
            parts.append(
                {
                    "kind": np.full(len(rows), kind, dtype=np.int8),
                    "source_row": rows,
                    "process": table.process[rows],
                    "correlation": table.correlation[rows],
                    "node": table.graph_node[rows],
                    "device": table.device[rows],
                    "stream": table.stream[rows],
                    "start": table.start[rows],
                    "end": table.end[rows],
                }
            )
    if not parts:
        return Table.empty(
            {
                "kind": np.int8,
                "source_row": np.int64,
                "process": np.int32,
                "correlation": np.int64,
                "node": np.int64,
                "device": np.int32,
                "stream": np.int32,
                "start": np.int64,
                "end": np.int64,
            }
        )
    return Table({name: np.concatenate([p[name] for p in parts]) for name in parts[0]})


@dataclass
class GraphLaunches:
    """One entry per graph launch seen on the GPU (node mode: grouped node activities; graph mode: whole rows)."""

    api_row: np.ndarray  # the cudaGraphLaunch call (-1 when not recorded)
    start: np.ndarray
    end: np.ndarray
    nodes: np.ndarray  # node activities in the launch; -1 in graph mode, where nodes are not traced
    graph_id: np.ndarray
    streams: np.ndarray  # distinct streams the launch ran on (1 in graph mode)
    device: np.ndarray  # the device of its first node (graph mode: of the whole-graph row)
    key: np.ndarray  # node mode: call_key(process, correlationId), what its node activities share; -1 otherwise

    def __len__(self) -> int:
        return len(self.start)

    @property
    def span_ns(self) -> np.ndarray:
        return self.end - self.start


def launch_parts(nodes: Table, key: np.ndarray, count: np.ndarray | None = None) -> Table:
    """Node activities (or parts from several windows of one trace, with their `count`) grouped by
    (launch `key`, stream): first start, last end, how many activities, and kind, source row, device and
    node of each group's first row, groups in (key, stream) order. Parts of several windows concatenated
    and grouped again give the parts of the whole."""
    order = np.lexsort((nodes.stream, key))
    k, stream = key[order], nodes.stream[order]
    first = np.flatnonzero(np.r_[True, (k[1:] != k[:-1]) | (stream[1:] != stream[:-1])]) if len(k) else order
    counts = np.ones(len(k), np.int64) if count is None else count[order]
    return Table(
        {
            "key": k[first],
            "stream": stream[first],
            "start": np.minimum.reduceat(nodes.start[order], first) if len(k) else nodes.start[:0],
            "end": np.maximum.reduceat(nodes.end[order], first) if len(k) else nodes.end[:0],
            "count": np.add.reduceat(counts, first) if len(k) else counts,
            **{name: nodes[name][order][first] for name in ("kind", "source_row", "device", "node")},
        }
    )


def launches_of_parts(parts: Table) -> Table:
    """Parts (`launch_parts`) gathered into launches: per key its start, end, node activities, distinct
    streams, and the first part's kind, source row, device and graph."""
    k = parts.key
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if len(k) else np.empty(0, np.int64)
    return Table(
        {
            "key": k[first],
            "start": np.minimum.reduceat(parts.start, first) if len(k) else parts.start,
            "end": np.maximum.reduceat(parts.end, first) if len(k) else parts.end,
            "nodes": np.add.reduceat(parts["count"], first) if len(k) else parts["count"],
            "streams": np.diff(np.r_[first, len(k)]),
            "graph_id": graph_of(parts.node[first]),
            **{name: parts[name][first] for name in ("kind", "source_row", "device")},
        }
    )


def graph_launches(trace: Trace, correlation: Correlation, nodes: Table | None = None) -> GraphLaunches:
    """Group node activities by launch (process, correlationId) and append whole-graph rows."""
    nodes = node_activities(trace) if nodes is None else nodes
    api_rows, starts, ends, counts, graph_ids, streams, devices, keys = [], [], [], [], [], [], [], []
    if len(nodes):
        grouped = launches_of_parts(launch_parts(nodes, call_key(nodes.process, nodes.correlation)))
        keys.append(grouped.key)
        starts.append(grouped.start)
        ends.append(grouped.end)
        counts.append(grouped.nodes)
        graph_ids.append(grouped.graph_id)
        devices.append(grouped.device)
        streams.append(grouped.streams)
        call = np.full(len(grouped), -1, dtype=np.int64)
        for kind in NODE_WORK:
            sel = grouped.kind == kind
            call[sel] = correlation.api_row[kind.table][grouped.source_row[sel]]
        api_rows.append(call)
    whole = trace.graph_launches
    if len(whole):
        api_rows.append(correlation.api_row["graph_launches"])
        starts.append(whole.start)
        ends.append(whole.end)
        counts.append(np.full(len(whole), -1, dtype=np.int64))
        graph_ids.append(whole.graph_id)
        streams.append(np.ones(len(whole), dtype=np.int64))
        devices.append(whole.device)
        keys.append(np.full(len(whole), -1, dtype=np.int64))
    if not starts:
        empty = np.empty(0, np.int64)
        return GraphLaunches(empty, empty, empty, empty, empty, empty, empty, empty)
    parts = (api_rows, starts, ends, counts, graph_ids, streams, devices, keys)
    result = [np.concatenate(part) for part in parts]
    order = np.argsort(result[1], kind="stable")
    return GraphLaunches(*(array[order] for array in result))


def launch_of_nodes(graphs: GraphLaunches, nodes: Table) -> np.ndarray:
    """For each node activity, the index of its graph launch in `graphs` (-1 if none)."""
    known = np.flatnonzero(graphs.key >= 0)
    if not len(known) or not len(nodes):
        return np.full(len(nodes), -1, dtype=np.int64)
    order = known[np.argsort(graphs.key[known])]
    sorted_keys = graphs.key[order]
    key = call_key(nodes.process, nodes.correlation)
    at = np.minimum(np.searchsorted(sorted_keys, key), len(order) - 1)
    return np.where(sorted_keys[at] == key, order[at], -1)


def node_durations(trace: Trace, nodes: Table | None = None) -> Table:
    """Per executed graph node (process, graphNodeId): duration statistics over launches, kind, name,
    stream and the launch configuration of its first kernel (grid_x .. block_z; 0 for copies and memsets),
    and for copies and memsets the bytes (and a copy's direction, copy_kind) of the first one.

    `name` is the kernel's short-name symbol for kernel nodes and -1 for copies and memsets.
    """
    nodes = node_activities(trace) if nodes is None else nodes
    key = pair_key(nodes.process, nodes.node)  # one group per (process, graphNodeId), whatever the ids
    stats = grouped_stats(key, nodes.start, nodes.end)
    if not len(stats):
        empty = {c: np.empty(0, np.int64) for c in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")}
        return stats.with_columns(
            node=stats.key,
            kind=np.empty(0, np.int8),
            name=np.empty(0, np.int64),
            stream=np.empty(0, np.int32),
            bytes=np.empty(0, np.int64),
            copy_kind=np.empty(0, np.int64),
            **empty,
        )
    first = np.unique(key, return_index=True)
    at = dict(zip(first[0].tolist(), first[1].tolist()))
    rows = np.array([at[k] for k in stats.key.tolist()], dtype=np.int64)
    kind = nodes.kind[rows]
    name = np.full(len(rows), -1, dtype=np.int64)
    is_kernel = kind == Activity.KERNEL
    kernel_rows = nodes.source_row[rows][is_kernel]
    name[is_kernel] = trace.kernels.short_name[kernel_rows]
    config = {}
    for column in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):  # of the node's first kernel
        values = np.zeros(len(rows), dtype=np.int64)
        values[is_kernel] = trace.kernels[column][kernel_rows]
        config[column] = values
    copies = np.zeros(len(rows), dtype=np.int64)  # bytes of the node's first copy or memset; -1 for kernels
    direction = np.full(len(rows), -1, dtype=np.int64)  # a copy's copyKind (core.events.COPY_DIRECTIONS)
    for activity, table in ((Activity.MEMCPY, trace.memcpy), (Activity.MEMSET, trace.memset)):
        mine = kind == activity
        if mine.any() and len(table):
            source = nodes.source_row[rows][mine]
            copies[mine] = table.bytes[source]
            if activity == Activity.MEMCPY and "copy_kind" in table:
                direction[mine] = table.copy_kind[source]
    copies[is_kernel] = -1
    stats = stats.with_columns(
        node=nodes.node[rows], kind=kind, name=name, stream=nodes.stream[rows], bytes=copies, copy_kind=direction,
        **config,
    )  # fmt: skip
    return stats.take(np.argsort(stats.node, kind="stable"))
