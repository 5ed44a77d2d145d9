"""Version, platform and capture options of an export, and a plain account of what it holds."""

from __future__ import annotations

from graphscope.core.errors import GraphscopeError
from graphscope.core.events import GPU_WORK
from graphscope.trace import schema
from graphscope.trace.database import ExportDatabase
from graphscope.trace.model import ExportInfo, Trace

_EXPORT_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")
_GRAPH_MODE_KEY = "CUDA_GRAPH_TRACE_OPTIONS:MODE"
DEVICE_GRAPH_TRACE = "CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE"


def read_export_info(db: ExportDatabase) -> ExportInfo:
    """Version and capture metadata; the oldest layout has none and says so in `layout`."""
    info = ExportInfo(path=db.path, size_bytes=db.path.stat().st_size, tables=list(db.tables))
    for table in _EXPORT_TABLES:
        meta = db.key_values(table)
        if meta:
            info.nsys_version = meta.get("EXPORT_PRODUCT_VERSION")
            info.schema_version = meta.get("EXPORT_SCHEMA_VERSION")
            info.platform = meta.get("EXPORT_PLATFORM")
            info.layout = f"{table} metadata"
            break
    else:
        info.layout = "no export metadata (an Nsight Systems layout from about 2021 or earlier)"
    info.capture = db.key_values("META_DATA_CAPTURE")
    return info


def capture_graph_mode(capture: dict[str, str]) -> str | None:
    """'node' or 'graph' from the capture option `...CUDA_GRAPH_TRACE_OPTIONS:MODE`, if recorded."""
    for key, value in capture.items():
        if key.endswith(_GRAPH_MODE_KEY) and value.strip().lower() in ("node", "graph"):
            return value.strip().lower()
    return None


def graph_trace_options(capture: dict[str, str]) -> dict[str, str]:
    """The graph trace options recorded besides the mode (`...CUDA_GRAPH_TRACE_OPTIONS:<NAME>`), such as
    whether device-launched graphs were traced (nsys 2025+ `--cuda-graph-trace=...:host-and-device`):
    {NAME: value} as the file spells them; the key names past MODE are not documented, so none is assumed."""
    options = {}
    for key, value in capture.items():
        name = key.rpartition(_GRAPH_MODE_KEY.rsplit(":", 1)[0] + ":")[2]
        if name != key and name and not key.endswith(_GRAPH_MODE_KEY):
            options[name] = value
    return options


def device_graph_launches(trace: Trace) -> int | None:
    """Rows of `CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE` (graphs launched from the device, each traced as a
    whole) where the export has the table; None without it. Its SQLite columns are not documented, so
    its rows are only counted, not drawn."""
    if DEVICE_GRAPH_TRACE not in trace.info.tables:
        return None
    try:
        with ExportDatabase(trace.path) as db:
            return db.row_count(DEVICE_GRAPH_TRACE)
    except (GraphscopeError, OSError):
        return None  # the file moved or changed since it was opened


def infer_graph_mode(trace: Trace) -> str | None:
    """The graph trace mode: the capture option if recorded, else what the rows show, else None."""
    recorded = capture_graph_mode(trace.info.capture)
    cuda = len(trace.api) or any(len(getattr(trace, kind.table)) for kind in GPU_WORK)
    if recorded and cuda:  # the option is recorded even where CUDA was not traced: it then means nothing
        return recorded
    if len(trace.graph_launches):
        return "graph"
    if trace.has_node_work:
        return "node"
    return None


def describe_contents(db: ExportDatabase, trace: Trace) -> None:
    """Fill `trace.info.holds` (row counts) and `trace.info.lacks` (what a user might expect but lacks)."""
    info = trace.info
    info.holds = {
        "cuda_api_calls": len(trace.api),
        "kernels": len(trace.kernels),
        "memcpy": len(trace.memcpy),
        "memset": len(trace.memset),
        "synchronization": len(trace.sync),
        "graph_launch_rows": len(trace.graph_launches),
        "nvtx_events": len(trace.nvtx),
        "graph_node_events": len(trace.graph_nodes),
        "graph_events": len(trace.graph_events),
        "threads": len(trace.threads),
        "gpus": len(trace.gpus),
    }
    lacks = info.lacks
    if not db.resolve_table(schema.RUNTIME):
        lacks.append("no CUDA API table: CPU launch lanes and launch overhead are unavailable")
    if not db.resolve_table(schema.KERNEL):
        copies = len(trace.memcpy) + len(trace.memset)
        if copies:
            lacks.append(
                f"no kernel table: the GPU ran {len(trace.memcpy):,} memcpys and {len(trace.memset):,} memsets and no "
                "kernels; kernel statistics are empty"
            )
        else:
            reason = "CUDA API rows but no GPU activity was recorded" if len(trace.api) else "CUDA tracing was off"
            lacks.append(f"no kernel table ({reason}): GPU lanes, kernel statistics and utilisation are empty")
    if not db.resolve_table(schema.NVTX):
        lacks.append("no NVTX table: no user ranges")
    if info.nsys_version is None:
        lacks.append("no version metadata: the Nsight Systems version is unknown")
    if not trace.gpus:
        lacks.append("no GPU description (TARGET_INFO_GPU)")
    if info.backtrace_duplicates:
        info.warnings.append(
            f"{info.backtrace_duplicates} CUDA backtrace rows (eventClass 67) duplicate real calls; they were left out"
        )
