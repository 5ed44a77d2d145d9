"""PyTorch-profiler (Kineto) traces as the same columnar tables an Nsight Systems export gives.

- CPU: `cuda_runtime` and `cuda_driver` events (HIP names too) are API rows; `cpu_op`,
  `user_annotation` and `python_function` ranges are NVTX-like ranges of their thread, their category
  kept as the range's domain (RANGE_DOMAINS; so `ProfilerStep#N` ranges are steps: `nvtx:'ProfilerStep#*'`).
- GPU: `kernel`, `gpu_memcpy` and `gpu_memset` events on their device and stream, with grid, block,
  registers, shared memory, bytes and copy direction where the trace has them.
- Graphs: a graph launch (`cudaGraphLaunch`, `hipGraphLaunch`) and the work it replayed share the launch's
  correlation id. That work gets graph-node ids (`core.events.node_id`): the graph is the launch's
  sequence of kernel names (identical sequences are one graph), the node its position in start order,
  so graph brackets, node statistics and trace DAGs work as for a node-mode Nsight export. Where the
  trace records them (recent PyTorch's `graph node id` argument: the exec graph's id in the high 32 bits,
  as Nsight's graphNodeId), the recorded ids are kept; a recorded `graph id` names the graph.
Times become integer nanoseconds (the trace writes microseconds).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np

from graphscope.core import sets
from graphscope.core.bounds import clamp_durations
from graphscope.core.errors import NotAnExportError
from graphscope.core.events import NODE_WORK, RANGE_DOMAINS, ApiKind, node_id
from graphscope.core.process import give_back_freed
from graphscope.core.symbols import SymbolTable, kernel_short_name
from graphscope.core.table import Table
from graphscope.trace import kineto_json
from graphscope.trace.kineto_columns import API_CATEGORIES, COLUMNS, Columns
from graphscope.trace.model import ExportInfo, GpuInfo, Trace
from graphscope.trace.schema import NvtxType, classify_api, narrow_ids

__all__ = ["API_CATEGORIES", "RANGE_DOMAINS", "load_kineto"]


def load_kineto(path: Path) -> Trace:
    """Read a PyTorch-profiler trace (.json, .json.gz, .pt.trace.json.gz)."""
    with give_back_freed():  # its buffers are small and short-lived (core/process.py)
        return _load(path)


def _load(path: Path) -> Trace:
    columns = Columns()
    header = kineto_json.decode(path, columns)
    if not any(columns.count(key) for key in COLUMNS):
        raise NotAnExportError(
            f"{path}: trace-event JSON, but not a PyTorch-profiler trace (no CUDA runtime, kernel, copy or "
            "operator events)"
        )
    present = sorted(key for key in COLUMNS if columns.count(key))
    symbols = SymbolTable(list(columns.names))
    warnings: list[str] = []
    if columns.skipped:
        warnings.append(f"{columns.skipped:,} events with values that are not numbers were left out")
    api = _table(columns, "api")
    nvtx = _table(columns, "nvtx")
    clamp_durations("api", api.start, api.end, warnings)
    clamp_durations("nvtx", nvtx.start, nvtx.end, warnings)
    processes, threads, (api_thread, nvtx_thread) = _entities(symbols, api, nvtx)
    tables = {
        "api": _narrowed(_api(api, processes, api_thread)),
        "nvtx": _narrowed(_nvtx(nvtx, processes, nvtx_thread)),
    }
    del api, nvtx, api_thread, nvtx_thread  # their pids, tids and int64 ids go before the GPU tables come
    calls = (tables["api"].process, tables["api"].correlation)
    kernels = _table(columns, "kernels")
    memcpy = _table(columns, "memcpy")
    memset = _table(columns, "memset")
    for key, table in (("kernels", kernels), ("memcpy", memcpy), ("memset", memset)):
        clamp_durations(key, table.start, table.end, warnings)
    _check_dimensions(kernels, warnings)
    tables["kernels"] = _kernels(kernels, symbols, calls)
    tables["memcpy"] = _copies(memcpy, calls, memset=False)
    tables["memset"] = _copies(memset, calls, memset=True)
    del kernels, memcpy, memset, table
    graph_calls = _graph_nodes(tables, symbols, tables["api"])
    for kind in NODE_WORK:  # the GPU tables made here
        tables[kind.table] = _narrowed(tables[kind.table])
    info = ExportInfo(
        path=path,
        size_bytes=path.stat().st_size,
        schema_version=None if header.schemaVersion is None else str(header.schemaVersion),
        platform="PyTorch profiler (Kineto)" + (" on ROCm" if _is_hip(symbols) else ""),
        layout="kineto",
        capture={k: str(v) for k, v in (header.distributedInfo or {}).items()},
        tables=present,
        warnings=warnings,
    )
    empty_gpu = _empty_gpu()
    trace = Trace(
        info=info,
        symbols=symbols,
        processes=processes,
        threads=threads,
        api=tables["api"],
        kernels=tables["kernels"],
        memcpy=tables["memcpy"],
        memset=tables["memset"],
        sync=Table.empty({**empty_gpu, "sync_type": np.int16}),
        graph_launches=Table.empty({**empty_gpu, "graph_id": np.int64, "graph_exec_id": np.int64}),
        nvtx=tables["nvtx"],
        graph_nodes=Table.empty(
            {c: np.int64 for c in ("start", "end", "node", "original_node")}
            | {"event_class": np.int16, "thread": np.int32, "process": np.int32, "name": np.int32}
        ),
        graph_events=Table.empty({"start": np.int64, "end": np.int64, "thread": np.int32, "process": np.int32}),
        streams=Table.empty(
            {"pid": np.int64, "context": np.int32, "stream": np.int32, "priority": np.int32, "flag": np.int16}
        ),
        gpus=_gpus(header.deviceProperties),
    )
    _describe(trace, graph_calls)
    return trace


def _narrowed(table: Table) -> Table:
    """The table as kept: id columns in their narrowest type (`narrow_ids`), the recorded graph id gone."""
    return Table(narrow_ids({n: table[n] for n in table.columns if n != "graph_arg"}))


def _table(columns: Columns, key: str) -> Table:
    """One table's rows as int64 columns, sorted by start (the first column): a column at a time from
    the batches' matrices, which go as the columns come (no whole sorted copy of the table)."""
    names = COLUMNS[key]
    parts, columns.parts[key] = columns.parts[key], []
    if not parts:
        return Table({n: np.empty(0, np.int64) for n in names})
    order = np.argsort(np.concatenate([part[:, 0] for part in parts]), kind="stable")
    table = {n: np.concatenate([part[:, i] for part in parts])[order] for i, n in enumerate(names)}
    return Table(table)


def _entities(symbols: SymbolTable, *tables: Table) -> tuple[Table, Table, list[np.ndarray]]:
    """The processes and threads of the CPU tables' rows (each distinct pid, each distinct (pid, tid)
    pair, in order), and each table's rows' thread index: sorted arrays, where a set of pairs and a
    dict lookup per row took 60 ms of a 73k-row trace."""
    pid = np.concatenate([table.pid for table in tables])
    tid = np.concatenate([table.tid for table in tables])
    index = np.empty(len(pid), np.int32)
    if len(pid):
        order = np.lexsort((tid, pid))
        pid, tid = pid[order], tid[order]
        first = np.ones(len(pid), bool)
        first[1:] = (pid[1:] != pid[:-1]) | (tid[1:] != tid[:-1])
        index[order] = np.cumsum(first) - 1
        pid, tid = pid[first], tid[first]
        pids = pid[np.concatenate(([True], pid[1:] != pid[:-1]))]
    else:
        pids = np.zeros(1, np.int64)
        pid, tid = pids, np.zeros(1, np.int64)  # one thread 0 of process 0 stands for none
    processes = Table(
        {
            "key": pids.astype(np.int64),
            "pid": pids.astype(np.int64),
            "name": np.array([symbols.intern(f"pid {p}") for p in pids.tolist()], dtype=np.int32),
        }
    )
    threads = Table(
        {
            "global_tid": _global_tids(pid, tid),
            "tid": tid.astype(np.int64),
            "process": np.searchsorted(processes.pid, pid).astype(np.int32),
            "name": np.array([symbols.intern(f"thread {t}") for t in tid.tolist()], dtype=np.int32),
        }
    )
    bounds = np.cumsum([0, *(len(table) for table in tables)])
    return processes, threads, [index[low:high] for low, high in pairwise(bounds.tolist())]


def _global_tids(pid: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """Nsight's thread key (pid << 24 | tid) where every pid allows it; else the pair's index, which is
    as unique (a pid of 2**39 or more would overflow int64 shifted)."""
    if len(pid) and int(pid.min()) >= 0 and int(pid.max()) < (1 << 39):
        return ((pid.astype(np.int64) << 24) | (tid.astype(np.int64) & 0xFFFFFF)).astype(np.int64)
    return np.arange(len(pid), dtype=np.int64)


def _check_dimensions(kernels: Table, warnings: list[str]) -> None:
    """Launch dimensions are 32-bit in CUDA (grid x below 2**31, the rest below 2**16): a value outside
    int32 is damage; those kernels' dimensions become 0 (unknown) instead of wrapping."""
    if not len(kernels):
        return
    names = ("gx", "gy", "gz", "bx", "by", "bz")
    bad = np.zeros(len(kernels), bool)
    for name in names:
        bad |= (kernels[name] < 0) | (kernels[name] > np.iinfo(np.int32).max)
    if bad.any():
        warnings.append(
            f"kernels: {int(bad.sum())} rows give launch dimensions beyond CUDA's (2**31 - 1); their dimensions "
            "are shown as unknown"
        )
        for name in names:
            kernels[name][bad] = 0


def _cpu_columns(table: Table, processes: Table, thread: np.ndarray) -> dict[str, np.ndarray]:
    return {"thread": thread, "process": np.searchsorted(processes.pid, table.pid).astype(np.int32)}


def _api(api: Table, processes: Table, thread: np.ndarray) -> Table:
    return Table(
        {
            "start": api.start,
            "end": api.end,
            "event_class": np.zeros(len(api), np.int16),
            "correlation": api.correlation,
            "name": api.name.astype(np.int32),
            "return_value": np.zeros(len(api), np.int64),
            **_cpu_columns(api, processes, thread),
        }
    )


def _nvtx(nvtx: Table, processes: Table, thread: np.ndarray) -> Table:
    return Table(
        {
            "start": nvtx.start,
            "end": nvtx.end,
            "event_type": np.full(len(nvtx), NvtxType.PUSH_POP, np.int16),
            "text": nvtx.text.astype(np.int32),
            "domain": nvtx.domain.astype(np.int64, copy=False),
            "color": np.full(len(nvtx), -1, np.int64),
            "shapes": nvtx.shapes.astype(np.int32),  # an operator's input shapes (symbol id), -1 without
            **_cpu_columns(nvtx, processes, thread),
        }
    )


def _launching_process(correlation: np.ndarray, calls: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """GPU rows carry the device as their pid: their process is that of the call with their correlation id."""
    process, call_correlation = calls
    if not len(call_correlation):
        return np.zeros(len(correlation), np.int32)
    order = np.argsort(call_correlation, kind="stable")
    at = np.minimum(np.searchsorted(call_correlation[order], correlation), len(order) - 1)
    found = call_correlation[order][at] == correlation
    return np.where(found, process[order][at], 0).astype(np.int32)


def _gpu_columns(table: Table, calls: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    return {
        "start": table.start,
        "end": table.end,
        "device": table.device,  # int64 here; narrow_ids narrows them to what their values need
        "stream": table.stream,
        "context": table.context,
        "correlation": table.correlation,
        "process": _launching_process(table.correlation, calls),
        "graph_node": table.node_arg.copy(),  # recorded ids where the trace has them; else _graph_nodes gives them
        "graph_arg": table.graph_arg,
    }


def _kernels(k: Table, symbols: SymbolTable, calls: tuple[np.ndarray, np.ndarray]) -> Table:
    names = sets.unique(k.name)
    short = np.zeros(int(names[-1]) + 1 if len(names) else 0, np.int32)  # full name's symbol -> short name's
    for full in names.tolist():
        short[full] = symbols.intern(kernel_short_name(symbols.name(full)))
    short_name = short[k.name]
    return Table(
        {
            **_gpu_columns(k, calls),
            "short_name": short_name,
            "name": k.name.astype(np.int32),
            "mangled": np.full(len(k), -1, np.int32),
            **{f"grid_{a}": k[f"g{a}"].astype(np.int32) for a in "xyz"},
            **{f"block_{a}": k[f"b{a}"].astype(np.int32) for a in "xyz"},
            "registers": k.regs.astype(np.int32),
            "static_smem": k.smem.astype(np.int32),
            "dynamic_smem": np.zeros(len(k), np.int32),
        }
    )


def _copies(table: Table, calls: tuple[np.ndarray, np.ndarray], memset: bool) -> Table:
    columns = {**_gpu_columns(table, calls), "bytes": table.bytes}
    if memset:
        columns |= {"value": np.zeros(len(table), np.int64), "mem_kind": np.full(len(table), -1, np.int16)}
    else:
        minus = np.full(len(table), -1, np.int16)
        columns |= {"copy_kind": table.copy_kind.astype(np.int16), "src_kind": minus, "dst_kind": minus.copy()}
    return Table(columns)


def _graph_nodes(tables: dict[str, Table], symbols: SymbolTable, api: Table) -> dict[str, int]:
    """Give the work of every graph launch graph-node ids; returns launch counts (with and without work)
    and how many rows without a launching call were given to a replay (`adopted`, see _adopt)."""
    names = [n for n in sets.unique(api.name).tolist() if classify_api(symbols.name(n)) == ApiKind.GRAPH_LAUNCH]
    launches = api.correlation[sets.isin(api.name, names)]
    counts = {"graph_launches": len(launches), "empty": 0, "adopted": 0}
    if not len(launches):
        return counts
    work = [(kind.table, tables[kind.table]) for kind in NODE_WORK]
    members: dict[int, list[tuple[int, str, int]]] = {int(c): [] for c in launches.tolist()}
    for key, table in work:
        for row in np.flatnonzero(sets.isin(table.correlation, launches)).tolist():
            members[int(table.correlation[row])].append((int(table.start[row]), key, row))
    adopted = _adopt(members, work, api.correlation)
    counts["adopted"] = sum(len(rows) for rows in adopted.values())
    graphs: dict[tuple, int] = {}
    for correlation, found in members.items():
        if not found:
            counts["empty"] += 1
            continue
        found.sort()
        if all(tables[key].graph_node[row] >= 0 for _, key, row in found):
            continue  # the trace recorded its nodes' ids (recent PyTorch's "graph node id")
        recorded = int(tables[found[0][1]].graph_arg[found[0][2]])  # its "graph id", where recorded
        signature = tuple((key, int(tables[key].name[row])) if key == "kernels" else (key, 0) for _, key, row in found)
        graph = recorded if recorded >= 0 else graphs.setdefault(signature, len(graphs) + 1)
        for index, (_, key, row) in enumerate(found):
            tables[key].graph_node[row] = node_id(graph, index)
        body = adopted.get(correlation)
        if body:  # a body graph of this one, its nodes numbered by kernel in order of first execution
            inner = graphs.setdefault(("body", graph), len(graphs) + 1)
            order: dict[tuple[str, int], int] = {}
            for _, key, row in sorted(body):
                name = (key, int(tables[key].name[row]) if key == "kernels" else 0)
                tables[key].graph_node[row] = node_id(inner, order.setdefault(name, len(order)))
    return counts


def _adopt(
    members: dict[int, list[tuple[int, str, int]]], work: list[tuple[str, Table]], calls: np.ndarray
) -> dict[int, list[tuple[int, str, int]]]:
    """Rows without a launching call that ran on a graph replay's device inside its span (first start to last
    end of the work its launch's correlation names), given to that replay. A conditional node's body runs a
    varying number of times per launch, and PyTorch 2.11's profiler records every execution with correlation
    0, on a stream of its own (48 of 48 body kernels of examples/while_decode.py over 4 launches on an H100,
    on stream 15 while the captured nodes ran on 13): counted as eager work they made a graph step look half
    eager and the body look unrecorded. They get node ids of a body graph of their own and keep their
    correlation, as Nsight Systems records a body's executions (its own node ids, a correlation id apiece),
    so the launched graph keeps its captured nodes and its node count whatever a launch's iteration count.
    A stream that also ran eagerly launched work is not a body's: what lost its call there stays eager."""
    by_key = dict(work)
    eager: set[tuple[int, int]] = set()  # (device, stream) of every row an eager call launched
    for _, table in work:
        launched = sets.isin(table.correlation, calls) & ~sets.isin(table.correlation, list(members))
        eager.update(zip(table.device[launched].tolist(), table.stream[launched].tolist(), strict=True))
    spans = {}  # launch correlation -> (first start, last end, its devices)
    for correlation, found in members.items():
        if found:
            rows = [(by_key[key], row) for _, key, row in found]
            spans[correlation] = (
                min(int(t.start[r]) for t, r in rows),
                max(int(t.end[r]) for t, r in rows),
                {int(t.device[r]) for t, r in rows},
            )
    adopted: dict[int, list[tuple[int, str, int]]] = {}
    for key, table in work:
        orphans = np.flatnonzero(~sets.isin(table.correlation, calls))
        if not len(orphans) or not spans:
            continue
        orphans = orphans[np.argsort(table.start[orphans], kind="stable")]
        starts = table.start[orphans]
        for correlation, (first, last, devices) in spans.items():
            lo, hi = np.searchsorted(starts, first, "left"), np.searchsorted(starts, last, "right")
            for row in orphans[lo:hi].tolist():
                place = (int(table.device[row]), int(table.stream[row]))
                if int(table.end[row]) <= last and place[0] in devices and place not in eager:
                    adopted.setdefault(correlation, []).append((int(table.start[row]), key, row))
    return adopted


def _empty_gpu() -> dict[str, type]:
    return {
        "start": np.int64,
        "end": np.int64,
        "device": np.int32,
        "stream": np.int32,
        "context": np.int32,
        "correlation": np.int64,
        "process": np.int32,
    }


def _gpus(properties: list[dict]) -> list[GpuInfo]:
    gpus = []
    for p in properties:
        if not isinstance(p, dict) or not isinstance(p.get("id"), int):
            continue
        major, minor = p.get("computeMajor"), p.get("computeMinor")
        gpus.append(
            GpuInfo(
                device=p["id"],
                name=str(p.get("name") or f"GPU {p['id']}"),
                sm_count=p.get("numSms"),
                compute_capability=f"{major}.{minor}" if major is not None else None,
                max_threads_per_block=p.get("maxThreadsPerBlock"),
                max_registers_per_block=p.get("regsPerBlock"),
                max_registers_per_sm=p.get("regsPerMultiprocessor"),
                max_shared_per_block=p.get("sharedMemPerBlock"),
                warp_size=p.get("warpSize"),
            )
        )
    return gpus


def _is_hip(symbols: SymbolTable) -> bool:
    return symbols.lookup("hipLaunchKernel") is not None or symbols.lookup("hipExtModuleLaunchKernel") is not None


def _describe(trace: Trace, graph_calls: dict[str, int]) -> None:
    info = trace.info
    info.holds = {
        "cuda_api_calls": len(trace.api),
        "kernels": len(trace.kernels),
        "memcpy": len(trace.memcpy),
        "memset": len(trace.memset),
        "ranges": len(trace.nvtx),
        "graph_launches": graph_calls["graph_launches"],
        "threads": len(trace.threads),
        "gpus": len(trace.gpus),
    }
    if graph_calls["empty"]:
        info.warnings.append(
            f"{graph_calls['empty']:,} of {graph_calls['graph_launches']:,} graph launches recorded no GPU work: "
            "the profiler did not trace inside those graphs, so their replay time is missing"
        )
    if graph_calls.get("adopted"):
        info.warnings.append(
            f"{graph_calls['adopted']:,} GPU activities without a launching call ran inside graph replays: read as "
            "their graphs' conditional-node bodies (the profiler records each body execution with correlation 0)"
        )
    if not len(trace.kernels):
        info.lacks.append("no kernels: the profiler recorded no CUDA activity (ProfilerActivity.CUDA off?)")
    if not len(trace.api):
        info.lacks.append("no CUDA runtime calls: launch overhead cannot be measured")
    info.lacks.append("no graph-node ids or capture events: graphs are told apart by the kernels they replay")
