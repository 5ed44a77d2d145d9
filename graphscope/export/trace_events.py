"""Chrome trace-event JSON (what Perfetto UI and chrome://tracing open), written as it is made.

The tracks: one process per traced process with a thread track per CPU thread (its CUDA calls) and one
per thread's NVTX ranges; one process per GPU with a thread track per stream (kernels, copies, memsets,
whole-graph rows) and tracks of its graph launches. Complete events ('X') with microsecond timestamps from
the start of the trace; a flow ('s' at the launch call, 'f' binding to the enclosing slice) from a launch
call to the first work it caused. Events are formatted a chunk at a time into lines and written at once,
so a million kernels never become a million Python dicts.
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from graphscope.core.events import Activity
from graphscope.core.paths import replacing
from graphscope.core.symbols import SymbolTable, display_api_name, elide
from graphscope.core.table import Table
from graphscope.trace.model import GpuInfo

GPU_PID_BASE = 1_000_000  # GPU "processes" sit above any OS pid
NVTX_TID_OFFSET = 1 << 30  # an NVTX track per thread, beside its CUDA API track
GRAPH_TID_OFFSET = 1 << 29  # per GPU, tracks of graph launches (one more per launch that overlaps another)
FORMAT_CHUNK = 10_000  # events formatted and written at a time: their lines, joined and encoded, take ~0.5 KB each
CATEGORIES = {Activity.KERNEL: "kernel", Activity.MEMCPY: "memcpy", Activity.MEMSET: "memset", Activity.GRAPH: "graph"}
NO_FLOW = -1
GRAPH_COLUMNS = ("start", "end", "nodes", "graph_id", "streams", "device")  # what `graph_launches` takes


@contextlib.contextmanager
def output(path: Path) -> Iterator[TextIO]:
    """The file to write, gzip-compressed when its name ends in .gz (Perfetto UI opens .json.gz); one
    line's error when it cannot be written. It is written beside its name and takes it only once whole:
    an export that fails halfway (a file damaged past its first windows) leaves no half a trace behind."""
    with replacing(path, "the trace") as partial:  # fsynced, symlinks written through, devices in place
        if path.name.endswith(".gz"):
            with gzip.open(partial, "wt", encoding="utf-8", compresslevel=3) as out:
                yield out
        else:
            with open(partial, "w", encoding="utf-8", buffering=1 << 20) as out:
                yield out


class EventWriter:
    """The JSON document's events, written in order, and how many of each kind were written."""

    def __init__(self, out: TextIO, symbols: SymbolTable) -> None:
        self._out = out
        self._first = True
        self._symbols = symbols
        self._api_names = _Quoted(symbols, display_api_name)  # each name's JSON made once for the whole file
        self._kernel_names = _Quoted(symbols, lambda text: elide(text, 200))
        self.counts = {"metadata": 0, "slices": 0, "flows": 0, "graph_launches": 0}
        out.write('{"displayTimeUnit":"ns","traceEvents":[\n')

    def events(self, events: Iterable[dict]) -> None:
        """A few events as dicts (metadata, graph launches)."""
        self.lines([json.dumps(event, separators=(",", ":")) for event in events])

    def lines(self, lines: Sequence[str]) -> None:
        """Events already formatted, one JSON object each."""
        if lines:
            self._out.write(("" if self._first else ",\n") + ",\n".join(lines))
            self._first = False

    def close(self) -> dict[str, int]:
        self._out.write("\n]}\n")
        return self.counts

    def metadata(self, events: Sequence[dict]) -> None:
        self.events(events)
        self.counts["metadata"] += len(events)

    def api_calls(
        self, name: np.ndarray, pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, dur: np.ndarray, flow: np.ndarray
    ) -> None:
        """CUDA calls (name ids, OS pid and tid, start and duration in ns from the origin), each followed by
        the start of its flow where `flow` holds an id (NO_FLOW: none)."""
        quoted = self._api_names
        for rows in _chunks(len(name)):
            lines = []
            for name_id, p, t, start, d, f in zip(
                name[rows].tolist(), pid[rows].tolist(), tid[rows].tolist(), _us(ts[rows]), _us(dur[rows]),
                flow[rows].tolist(),
            ):  # fmt: skip
                lines.append(
                    f'{{"ph":"X","cat":"cuda_api","name":{quoted(name_id)},"pid":{p},"tid":{t},'
                    f'"ts":{start!r},"dur":{d!r}}}'
                )
                if f != NO_FLOW:
                    lines.append(
                        f'{{"ph":"s","cat":"launch","name":"launch","id":{f},"pid":{p},"tid":{t},"ts":{start!r}}}'
                    )
            self.lines(lines)
            self.counts["slices"] += rows.stop - rows.start

    def gpu_work(
        self, kind: np.ndarray, name: np.ndarray, device: np.ndarray, stream: np.ndarray, ts: np.ndarray,
        dur: np.ndarray, flow: np.ndarray,
    ) -> None:  # fmt: skip
        """GPU work (`Activity` kind, a kernel's short-name id, device, stream, start and duration in ns from
        the origin), each followed by the end of its flow where `flow` holds an id."""
        quoted = self._kernel_names
        labels = {int(k): label for k, label in CATEGORIES.items()}
        for rows in _chunks(len(kind)):
            lines = []
            for k, name_id, dev, s, start, d, f in zip(
                kind[rows].tolist(), name[rows].tolist(), device[rows].tolist(), stream[rows].tolist(),
                _us(ts[rows]), _us(dur[rows]), flow[rows].tolist(),
            ):  # fmt: skip
                label = labels[k]
                shown = quoted(name_id) if label == "kernel" else f'"{label}"'
                p = GPU_PID_BASE + dev
                lines.append(
                    f'{{"ph":"X","cat":"{label}","name":{shown},"pid":{p},"tid":{s},"ts":{start!r},"dur":{d!r}}}'
                )
                if f != NO_FLOW:
                    lines.append(
                        f'{{"ph":"f","bp":"e","cat":"launch","name":"launch","id":{f},"pid":{p},"tid":{s},'
                        f'"ts":{start!r}}}'
                    )
                    self.counts["flows"] += 1
            self.lines(lines)
            self.counts["slices"] += rows.stop - rows.start

    def nvtx_ranges(self, text: np.ndarray, pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> None:
        """NVTX ranges (text ids, OS pid and tid, start and duration in ns from the origin) on their threads'
        NVTX tracks."""
        for rows in _chunks(len(text)):
            tracks = (tid[rows].astype(np.int64) + NVTX_TID_OFFSET).tolist()
            columns = (text[rows].tolist(), pid[rows].tolist(), tracks, _us(ts[rows]), _us(dur[rows]))
            self.events(
                {
                    "ph": "X",
                    "cat": "nvtx",
                    "name": elide(self._symbols.name(t), 500),
                    "pid": p,
                    "tid": k,
                    "ts": at,
                    "dur": d,
                }
                for t, p, k, at, d in zip(*columns)
            )
            self.counts["slices"] += rows.stop - rows.start

    def graph_launches(self, launches: Table, origin: int) -> None:
        """One slice per graph launch on its GPU's graph-launch tracks (`launches`: start, end, nodes (-1 when
        not traced), graph_id, streams, device), numbered in start order; with the tracks' names."""
        if not len(launches):
            return
        launches = launches.take(np.argsort(launches.start, kind="stable"))
        tracks = launch_tracks(launches.start, launches.end, launches.device)
        named = sorted(set(zip(launches.device.tolist(), tracks.tolist())))
        self.metadata(
            [_named("thread_name", GPU_PID_BASE + d, GRAPH_TID_OFFSET + t, _launch_track(t)) for d, t in named]
        )
        columns = (
            launches.graph_id.tolist(), launches.nodes.tolist(), launches.device.tolist(), tracks.tolist(),
            _us(launches.start - origin), _us(launches.end - launches.start), launches.streams.tolist(),
        )  # fmt: skip
        self.events(
            {
                "ph": "X",
                "cat": "graph_launch",
                "name": f"graph {graph}" + (f" ({nodes} nodes)" if nodes >= 0 else ""),
                "pid": GPU_PID_BASE + device,
                "tid": GRAPH_TID_OFFSET + track,
                "ts": start,
                "dur": d,
                "args": {"launch": number, "streams": streams},
            }
            for number, (graph, nodes, device, track, start, d, streams) in enumerate(zip(*columns), start=1)
        )
        self.counts["slices"] += len(launches)
        self.counts["graph_launches"] += len(launches)


def metadata_events(
    symbols: SymbolTable, processes: Table, threads: Table, streams: dict[int, list[int]], gpus: Sequence[GpuInfo]
) -> list[dict]:
    """Names of the processes, of each thread's CUDA-call and NVTX tracks, of the GPUs and of their
    streams (`streams`: device -> its streams)."""
    events = []
    for name, pid in zip(processes.name.tolist(), processes.pid.tolist()):
        events.append(_named("process_name", pid, 0, f"{symbols.name(name)} (pid {pid})"))
    for process, tid, name in zip(threads.process.tolist(), threads.tid.tolist(), threads.name.tolist()):
        pid, label = int(processes.pid[process]), symbols.name(name)
        events.append(_named("thread_name", pid, tid, f"{label} CUDA API"))
        events.append(_named("thread_name", pid, tid + NVTX_TID_OFFSET, f"{label} NVTX"))
    names = {gpu.device: gpu.name for gpu in gpus}
    for device in sorted(streams):
        label = f"GPU {device}" + (f" {names[device]}" if device in names else "")
        events.append(_named("process_name", GPU_PID_BASE + device, 0, label))
        events += [_named("thread_name", GPU_PID_BASE + device, s, f"stream {s}") for s in sorted(streams[device])]
    return events


def _launch_track(track: int) -> str:
    return "graph launches" + (f" ({track + 1})" if track else "")


def _named(what: str, pid: int, tid: int, name: str) -> dict:
    """A metadata event naming a process or a thread track."""
    return {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}}


def launch_tracks(start: np.ndarray, end: np.ndarray, device: np.ndarray) -> np.ndarray:
    """Per graph launch (in start order), its track on its GPU: 0, or the first track free at its start
    (launches on several streams overlap, and slices on one track must nest)."""
    track = np.zeros(len(start), np.int64)
    ends: dict[int, list[int]] = {}  # device -> each track's last end
    for index, (begin, finish, gpu) in enumerate(zip(start.tolist(), end.tolist(), device.tolist())):
        free = ends.setdefault(gpu, [])
        at = next((k for k, last in enumerate(free) if last <= begin), len(free))
        if at == len(free):
            free.append(0)
        free[at] = finish
        track[index] = at
    return track


class _Quoted:
    """Each name id's JSON string, made once: `shown` shapes the symbol's text; an absent name (-1) is '?'."""

    def __init__(self, symbols: SymbolTable, shown: Callable[[str], str]) -> None:
        self._symbols, self._shown = symbols, shown
        self._made: dict[int, str] = {-1: '"?"'}

    def __call__(self, name_id: int) -> str:
        made = self._made.get(name_id)
        if made is None:
            made = self._made[name_id] = json.dumps(self._shown(self._symbols.name(name_id)))
        return made


def _us(ns: np.ndarray) -> list[float]:
    """Whole nanoseconds as microseconds, as Python floats (their repr is what json.dumps writes): the
    double nearest ns / 1000, which is what rounding it to three decimals gives (exact up to 2**53 ns)."""
    return (np.asarray(ns) / 1000.0).tolist()


def _chunks(length: int) -> Iterator[slice]:
    for start in range(0, length, FORMAT_CHUNK):
        yield slice(start, min(start + FORMAT_CHUNK, length))
