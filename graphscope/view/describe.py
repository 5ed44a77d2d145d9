"""What the details panel says about a selected event (plain strings, no Qt)."""

from __future__ import annotations

import numpy as np

from graphscope.analysis.capture_ops import made_by
from graphscope.analysis.launch import api_kinds
from graphscope.core.events import COPY_DIRECTIONS, ApiKind, graph_of, index_in_graph
from graphscope.core.launch_config import format_dim
from graphscope.core.symbols import display_api_name
from graphscope.core.units import format_bytes, format_ns, format_time
from graphscope.graph.model import DagNode
from graphscope.view.document import TraceDocument
from graphscope.view.export_fields import event_fields, graph_trace_fields, kernel_launch_fields
from graphscope.view.layout import API, GRAPH_GROUP, GRAPH_ROW, KERNEL, MEMCPY, MEMSET, NVTX

Fields = list[tuple[str, str]]


def describe(document: TraceDocument, source: int, row: int) -> tuple[str, Fields]:
    """A title and (label, value) pairs for one event of a source table."""
    describers = {
        API: _api,
        KERNEL: _kernel,
        MEMCPY: _memcpy,
        MEMSET: _memset,
        GRAPH_ROW: _graph_row,
        NVTX: _nvtx,
        GRAPH_GROUP: _graph_group,
    }
    return describers[source](document, row)


def idle_details(summary: dict | None, whole: str = "the whole trace") -> tuple[str, Fields]:
    """What Details shows with nothing selected: the verdict of the scope the other panels describe
    (`summary`: that scope's `summarize()`; None while it is computed), so no panel keeps an old one."""
    if summary is None:
        return "Nothing selected", [("verdict", "computing…")]
    scope = summary.get("scope")
    return "Nothing selected", [
        ("scope", scope["label"] if scope else whole),
        ("verdict", summary["launch"]["verdict"]),
        ("tip", "click an event; drag the time axis or click an NVTX range to scope; Backspace clears it"),
    ]


def _time(document: TraceDocument, start: int, end: int) -> Fields:
    return [("start", format_time(document.layout.x_of(start))), ("duration", format_ns(end - start))]


def _launching_call(document: TraceDocument, kind: str, row: int) -> Fields:
    call = int(document.analysis.correlation.api_row[kind][row])
    if call < 0:
        return [("launched by", "not recorded")]
    api = document.trace.api
    name = display_api_name(document.trace.symbols.name(int(api.name[call])))
    start = getattr(document.trace, kind).start[row]
    after_return = start - api.end[call]
    returned = (
        f"{format_ns(after_return)} after it returned"
        if after_return >= 0
        else f"{format_ns(-after_return)} before it returned"
    )
    return [
        ("launched by", f"{name} ({format_ns(api.end[call] - api.start[call])})"),
        ("launch latency", f"{format_ns(start - api.start[call])} after the call began, {returned}"),
    ]


def _graph_node(document: TraceDocument, node: int) -> Fields:
    if node < 0:
        return []
    fields = [("graph node", f"graph {graph_of(node)}, node {index_in_graph(node)} (id {node})")]
    nodes = document.analysis.nodes
    mine = nodes.node == node
    if mine.sum() > 1:
        durations = (nodes.end - nodes.start)[mine]
        fields.append(("node over launches", f"{int(mine.sum())} launches, median {format_ns(np.median(durations))}"))
    return fields + made_by(document.trace, node)  # what made the node at capture: operator, module, line


def _kernel(document: TraceDocument, row: int) -> tuple[str, Fields]:
    k = document.trace.kernels
    symbols = document.trace.symbols
    short = symbols.name(int(k.short_name[row]))
    fields = [("kernel", short), ("full name", symbols.name(int(k.name[row])))]
    fields += _time(document, int(k.start[row]), int(k.end[row]))
    fields += [
        ("grid", format_dim((k.grid_x[row], k.grid_y[row], k.grid_z[row]), whole=True)),
        ("block", format_dim((k.block_x[row], k.block_y[row], k.block_z[row]), whole=True)),
        ("registers / thread", str(k.registers[row])),
        (
            "shared memory",
            f"{format_bytes(int(k.static_smem[row]))} static, {format_bytes(int(k.dynamic_smem[row]))} dynamic",
        ),
        ("device / stream", f"{k.device[row]} / {k.stream[row]}"),
    ]
    fields += kernel_launch_fields(document, row)  # launch type, cluster, green context (newer exports)
    fields += _launching_call(document, "kernels", row)
    fields += _graph_node(document, int(k.graph_node[row]))
    return f"Kernel {short}", fields


def _memcpy(document: TraceDocument, row: int) -> tuple[str, Fields]:
    m = document.trace.memcpy
    kind = COPY_DIRECTIONS.get(int(m.copy_kind[row]), "?")
    fields = [("copy", kind), ("bytes", format_bytes(int(m.bytes[row])))]
    fields += _time(document, int(m.start[row]), int(m.end[row]))
    duration = int(m.end[row] - m.start[row])
    if duration > 0:
        fields.append(("throughput", f"{m.bytes[row] / duration:.2f} GB/s"))
    fields.append(("device / stream", f"{m.device[row]} / {m.stream[row]}"))
    fields += _launching_call(document, "memcpy", row) + _graph_node(document, int(m.graph_node[row]))
    return f"Memcpy {kind}", fields


def _memset(document: TraceDocument, row: int) -> tuple[str, Fields]:
    m = document.trace.memset
    fields = [("bytes", format_bytes(int(m.bytes[row]))), ("value", str(m.value[row]))]
    fields += _time(document, int(m.start[row]), int(m.end[row]))
    fields.append(("device / stream", f"{m.device[row]} / {m.stream[row]}"))
    fields += _launching_call(document, "memset", row) + _graph_node(document, int(m.graph_node[row]))
    return "Memset", fields


def _graph_row(document: TraceDocument, row: int) -> tuple[str, Fields]:
    g = document.trace.graph_launches
    fields = [("graph", str(g.graph_id[row])), ("graph exec", str(g.graph_exec_id[row]))]
    fields += _time(document, int(g.start[row]), int(g.end[row]))
    fields.append(("nodes", "not traced (graph trace mode 'graph'; use --cuda-graph-trace=node)"))
    fields += _launching_call(document, "graph_launches", row) + graph_trace_fields(document)
    return "Graph launch (whole graph)", fields


def _graph_group(document: TraceDocument, row: int) -> tuple[str, Fields]:
    graphs = document.analysis.graphs
    graph = int(graphs.graph_id[row])
    same = np.flatnonzero(np.asarray(graphs.graph_id) == graph)  # launches of this graph, in start order
    nth = int(np.searchsorted(same, row)) + 1
    fields = [
        ("graph", f"{graph}: launch {nth:,} of its {len(same):,}" if len(same) > 1 else str(graph)),
        ("launch", f"{row + 1:,} of {len(graphs.graph_id):,} graph launches (open --select graph:{row + 1})"),
    ]
    fields += _time(document, int(graphs.start[row]), int(graphs.end[row]))
    nodes = int(graphs.nodes[row])
    fields.append(("node activities", str(nodes) if nodes >= 0 else "not traced"))
    fields.append(("streams", str(graphs.streams[row])))
    call = int(graphs.api_row[row])
    if call >= 0:
        api = document.trace.api
        fields.append(("launch call", format_ns(int(api.end[call] - api.start[call]))))
        fields.append(("latency", format_ns(int(graphs.start[row] - api.start[call]))))
    return f"Graph launch {row + 1:,}", fields + graph_trace_fields(document)


def _api(document: TraceDocument, row: int) -> tuple[str, Fields]:
    api = document.trace.api
    symbols = document.trace.symbols
    name = symbols.name(int(api.name[row]))
    kind = int(api_kinds(symbols, api.name[row : row + 1])[0])
    thread = int(api.thread[row])
    fields = [("call", name), ("kind", ApiKind(kind).label)]
    fields += _time(document, int(api.start[row]), int(api.end[row]))
    fields += [
        (
            "thread",
            f"{symbols.name(int(document.trace.threads.name[thread]))} [{int(document.trace.threads.tid[thread])}]",
        ),
        ("correlation id", str(api.correlation[row])),
        ("return value", str(api.return_value[row])),
    ]
    caused = document.analysis.correlation.activities_of(row)
    if caused:
        parts = [f"{len(rows)} {kind}" for kind, rows in caused.items()]
        fields.append(("GPU work", ", ".join(parts)))
    fields += event_fields(document, row)  # an event record's event and stream; a wait's record
    return display_api_name(name), fields


def _nvtx(document: TraceDocument, row: int) -> tuple[str, Fields]:
    nvtx = document.trace.nvtx
    text = document.trace.symbols.name(int(nvtx.text[row])) if nvtx.text[row] >= 0 else "(no text)"
    end = int(nvtx.end[row])
    fields = [("range", text)]
    fields += _time(document, int(nvtx.start[row]), max(end, int(nvtx.start[row])))
    if end < 0:
        fields.append(("kind", "mark or unclosed range"))
    return f"NVTX {text}", fields


def describe_nodes(nodes: list[DagNode]) -> tuple[str, Fields]:
    """The Graph view's inspector: one node, or a folded run of identical nodes."""
    node = nodes[0]
    title = (
        f"Graph node {node.index}" if len(nodes) == 1 else f"{len(nodes)} graph nodes {node.index}-{nodes[-1].index}"
    )
    fields = [("type", node.type), ("name", node.name)]
    if node.block:
        fields += [
            ("grid", format_dim(node.grid, whole=True)),
            ("block", format_dim(node.block, whole=True)),
            ("shared memory", format_bytes(node.shared_mem)),
        ]
    if node.type != "conditional":
        fields.append(("launch site", node.site or "none (not tunable)"))
    if node.trace_id is not None:
        graph, index = graph_of(node.trace_id), index_in_graph(node.trace_id)
        fields.append(("trace id", f"{node.trace_id} (graph {graph}, node {index})"))
    if node.duration_ns is not None:
        total = sum(n.duration_ns or 0 for n in nodes)
        fields.append(
            (
                "duration",
                f"median {format_ns(node.duration_ns)} over {node.launches} launches"
                + (f"; {format_ns(total)} for the {len(nodes)} nodes" if len(nodes) > 1 else ""),
            )
        )
    if node.stream is not None:
        fields.append(("stream", str(node.stream)))
    if node.type == "conditional":  # its type, iterations and bodies (graph/conditional.py)
        from graphscope.graph.conditional import fields as conditional_fields

        fields += conditional_fields(node)
    for key, value in node.detail.items():
        if key != "conditional":
            fields.append((key, format_bytes(value) if key == "bytes" else str(value)))
    return title, fields
