"""What Details adds from the newest Nsight Systems fields, where an export has them (plain strings, no
Qt): a kernel's launch type, thread-block cluster and green context; an event record call's event and
stream (and its completion on the GPU); a wait's event record on another stream; the graph trace
options recorded besides the mode. An export without them adds nothing: no row says "unknown"."""

from __future__ import annotations

from graphscope.core.launch_kinds import cluster_text, launch_type_text
from graphscope.core.symbols import display_api_name
from graphscope.core.units import format_ns, format_time
from graphscope.trace.cuda_events import event_records
from graphscope.trace.metadata import device_graph_launches, graph_trace_options
from graphscope.view.document import TraceDocument

Fields = list[tuple[str, str]]


def kernel_launch_fields(document: TraceDocument, row: int) -> Fields:
    """Launch type, cluster and green context of one kernel, where the export records them."""
    k = document.trace.kernels
    fields: Fields = []
    if "launch_type" in k and int(k.launch_type[row]) >= 0:
        fields.append(("launch type", launch_type_text(int(k.launch_type[row]))))
    if "cluster_x" in k:
        policy = int(k.cluster_policy[row]) if "cluster_policy" in k else -1
        cluster = cluster_text(int(k.cluster_x[row]), int(k.cluster_y[row]), int(k.cluster_z[row]), policy)
        if cluster is not None:
            fields.append(("cluster", cluster))
    if "green_context" in k and int(k.green_context[row]) > 0:  # 0 (2025 exports) or NULL: the device's own context
        fields.append(("green context", str(int(k.green_context[row]))))
    return fields


def event_fields(document: TraceDocument, api_row: int) -> Fields:
    """For an event record call: its event, stream and GPU completion; for a wait or sync on an event:
    the record it waited for (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`, trace/cuda_events.py)."""
    trace = document.trace
    records = event_records(trace)
    if not len(records.correlation):
        return []
    api = trace.api
    process = int(trace.processes.key[int(api.process[api_row])]) if "process" in api else -1
    correlation = int(api.correlation[api_row])
    fields: Fields = []
    made = records.record_of_call(process, correlation)
    if made is not None:
        fields.append(("event recorded", _record(records, made)))
        done = int(records.gpu_time[made])
        if done >= 0:
            after = done - int(api.end[api_row])
            fields.append(
                (
                    "event reached",
                    f"{format_time(document.layout.x_of(done))} on the GPU, {format_ns(after)} after the call returned",
                )
            )
    waited = records.record_waited_by(process, correlation)
    if waited is not None:
        call = _call_of(document, process, int(records.correlation[waited]))
        name = trace.symbols.name(int(api.name[api_row]))
        label = "queries" if "Query" in name else "waits for"  # cudaEventQuery carries the record's sync id too
        fields.append((label, _record(records, waited) + (f", recorded by {call}" if call else "")))
    return fields


def graph_trace_fields(document: TraceDocument) -> Fields:
    """The graph trace options the capture recorded besides the mode (device-launched graphs, say), and
    how many device-launched graph executions the export traced."""
    fields: Fields = []
    options = graph_trace_options(document.trace.info.capture)
    if options:
        text = ", ".join(f"{name.lower()} = {value}" for name, value in sorted(options.items()))
        fields.append(("graph trace options", text))
    device = device_graph_launches(document.trace)
    if device:
        fields.append(("device-launched graphs", f"{device:,} executions traced whole (not drawn)"))
    return fields


def _record(records, row: int) -> str:
    return f"event {int(records.event[row])} on stream {int(records.stream[row])} (device {int(records.device[row])})"


def _call_of(document: TraceDocument, process: int, correlation: int) -> str | None:
    """The name and start of the call with this correlation in this process, if the trace holds it."""
    trace = document.trace
    api = trace.api
    rows = (api.correlation == correlation).nonzero()[0]
    for row in rows.tolist():
        if "process" not in api or int(trace.processes.key[int(api.process[row])]) == process:
            name = display_api_name(trace.symbols.name(int(api.name[row])))
            return f"{name} at {format_time(document.layout.x_of(int(api.start[row])))}"
    return None
