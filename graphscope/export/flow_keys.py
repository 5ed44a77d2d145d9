"""Which CUDA calls and GPU work of an export begin and end a flow, decided before any window of it is
written (export/perfetto_stream.py), and what else the whole file must say first: its threads, processes
and each GPU's streams.

A flow joins the first kernel- or graph-launch call of a (process, correlationId) key to the first GPU
work of the same key. Each key that GPU work carries has a byte of flags: some work carries it, a launch
call carries it, its flow's start and end were written. A process's flags are indexed by the correlation
id itself where ids are dense (CUPTI counts them up from 1 in each process: 1 byte per id, against 8 for
a sorted array of keys, and no sort), by the id's rank among the process's ids otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from graphscope.analysis.launch import api_kinds
from graphscope.core import sets
from graphscope.core.events import GPU_WORK, ApiKind
from graphscope.trace import entities
from graphscope.trace.windowed import WindowedExport

WORKED, LAUNCHED, STARTED, ENDED = 1, 2, 4, 8
FLOWING = WORKED | LAUNCHED
DENSE_SLACK = 4  # ids up to this many times the work rows (plus DENSE_EXTRA) index the flags themselves
DENSE_EXTRA = 1 << 20
LAUNCH_KINDS = (int(ApiKind.KERNEL_LAUNCH), int(ApiKind.GRAPH_LAUNCH))
WORK_TABLES = tuple(kind.table for kind in GPU_WORK)
NEVER = np.iinfo(np.int64).max


class _Process:
    """One process's flags, indexed by correlation id (`ids` None) or by rank in its sorted `ids`; and, in
    a file whose work is out of start order, each id's first work start."""

    def __init__(self, size: int, ids: np.ndarray | None = None) -> None:
        self.ids = ids
        self.flags = np.zeros(size, np.uint8)
        self.first_start: np.ndarray | None = None

    def grow(self, size: int) -> None:
        """Room for ids below `size` (the flags indexed by id; at least doubled when they grow)."""
        if size > len(self.flags):
            grown = np.zeros(max(size, 2 * len(self.flags)), np.uint8)
            grown[: len(self.flags)] = self.flags
            self.flags = grown

    def slots(self, correlation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The slots of the ids it holds, and which of `correlation` those are."""
        if self.ids is None:
            found = (correlation >= 0) & (correlation < len(self.flags))
            return correlation[found].astype(np.int64), found
        at = np.searchsorted(self.ids, correlation)
        found = at < len(self.ids)
        found[found] = self.ids[at[found]] == correlation[found]
        return at[found], found


class FlowKeys:
    """The flags of every (process, correlationId) key GPU work carries, read in one pass over a few
    columns of the work tables and the CUDA calls (a second over the work tables in a file whose work rows
    are out of start order); the threads (globalTid), processes (globalPid) and streams seen meanwhile.
    Processes are numbered in the order first met (`numbers`)."""

    def __init__(self, source: WindowedExport) -> None:
        self._numbers: dict[int, int] = {}
        self._processes: dict[int, _Process] = {}
        self.global_tids: set[int] = set()
        self.global_pids: set[int] = set()
        self.streams: dict[int, set[int]] = defaultdict(set)
        in_order = self._read_work(source)
        self._read_calls(source)
        if not in_order:
            self._first_starts(source)

    def _read_work(self, source: WindowedExport) -> bool:
        """WORKED for every key GPU work carries, and the GPUs' streams; whether the work rows are in start
        order. A process's flags are indexed by id until one of its ids reaches past DENSE_SLACK times the
        file's work rows, by rank from then on."""
        limit = DENSE_SLACK * sum(n for key, n in source.rows.items() if key in WORK_TABLES) + DENSE_EXTRA
        by_rank: dict[int, list[np.ndarray]] = defaultdict(list)  # the ids of processes past the limit
        in_order = True
        for table in WORK_TABLES:
            last = np.iinfo(np.int64).min
            for columns in source.columns(table, ("global_pid", "correlation", "device", "stream", "start")):
                self.global_pids.update(entities.distinct(columns["global_pid"]).tolist())
                pairs = sets.unique_rows(np.stack([columns["device"], columns["stream"]], axis=1))
                for device, stream in pairs.tolist():
                    self.streams[device].add(stream)
                for number, rows in self._by_process(columns["global_pid"]):
                    correlation = columns["correlation"][rows]
                    correlation = correlation[correlation >= 0]
                    if not len(correlation):
                        continue
                    if number not in by_rank and int(correlation.max()) < limit:
                        process = self._processes.setdefault(number, _Process(0))
                        process.grow(int(correlation.max()) + 1)
                        process.flags[correlation] |= WORKED
                        continue
                    if number in self._processes:  # its ids so far, by rank from now on
                        by_rank[number].append(np.flatnonzero(self._processes.pop(number).flags & WORKED))
                    by_rank[number].append(correlation.astype(np.int64))
                start = columns["start"]
                in_order = in_order and bool(len(start) == 0 or (start[0] >= last and np.all(start[1:] >= start[:-1])))
                last = int(start[-1]) if len(start) else last
        for number, parts in by_rank.items():
            ids = sets.unique(np.concatenate(parts))
            self._processes[number] = _Process(len(ids), ids)
            self._processes[number].flags[:] = WORKED
        return in_order

    def _read_calls(self, source: WindowedExport) -> None:
        """LAUNCHED for every key a kernel- or graph-launch call carries; the threads of every call."""
        for columns in source.columns("api", ("global_tid", "correlation", "name")):
            self.global_tids.update(entities.distinct(columns["global_tid"]).tolist())
            launch = np.flatnonzero(sets.isin(api_kinds(source.symbols, columns["name"]), LAUNCH_KINDS))
            for number, rows in self._by_process(columns["global_tid"][launch]):
                if (process := self._processes.get(number)) is not None:
                    process.flags[process.slots(columns["correlation"][launch][rows])[0]] |= LAUNCHED

    def numbers(self, process_keys: np.ndarray) -> np.ndarray:
        """Each process key's number (a new key gets the next)."""
        known = self._numbers
        return np.array([known.setdefault(k, len(known)) for k in process_keys.tolist()], dtype=np.int64)

    def first(
        self, numbers: np.ndarray, correlation: np.ndarray, candidates: np.ndarray, written: int,
        starts: np.ndarray | None = None,
    ) -> np.ndarray:  # fmt: skip
        """For rows in time order (process `numbers`, correlation ids): True where a row is the first
        candidate of a flowing key whose flow's `written` flag (STARTED or ENDED) is not set yet, which it
        then sets. With `starts` (work rows of a file out of start order), the row must also start when
        its key's first work does."""
        chosen = np.zeros(len(correlation), bool)
        for number in sets.unique(numbers[candidates]).tolist():
            process = self._processes.get(number)
            if process is None:
                continue
            rows = np.flatnonzero(candidates & (numbers == number))
            slots, found = process.slots(correlation[rows])
            rows = rows[found]
            flags = process.flags[slots]
            fresh = ((flags & FLOWING) == FLOWING) & ((flags & written) == 0)
            if starts is not None and process.first_start is not None:
                fresh &= starts[rows] == process.first_start[slots]
            slots, rows = slots[fresh], rows[fresh]
            _, first = np.unique(slots, return_index=True)  # a key twice among these rows: its first
            process.flags[slots[first]] |= written
            chosen[rows[first]] = True
        return chosen

    def _by_process(self, global_ids: np.ndarray) -> Iterator[tuple[int, slice | np.ndarray]]:
        """(process number, its rows) for each process among rows of these globalPid/globalTid values."""
        keys = entities.process_key(global_ids)
        distinct = sets.unique(keys)
        if len(distinct) == 1:  # the usual trace: one process
            yield int(self.numbers(distinct)[0]), slice(None)
            return
        at = np.searchsorted(distinct, keys)
        for index, number in enumerate(self.numbers(distinct).tolist()):
            yield number, np.flatnonzero(at == index)

    def _first_starts(self, source: WindowedExport) -> None:
        """Each key's earliest work start: in a file whose work rows are out of start order, a key's first
        work may come in a later window than some other work of it."""
        for process in self._processes.values():
            process.first_start = np.full(len(process.flags), NEVER, np.int64)
        for table in WORK_TABLES:
            for columns in source.columns(table, ("global_pid", "correlation", "start")):
                for number, rows in self._by_process(columns["global_pid"]):
                    if (process := self._processes.get(number)) is not None:
                        slots, found = process.slots(columns["correlation"][rows])
                        np.minimum.at(process.first_start, slots, columns["start"][rows][found])
