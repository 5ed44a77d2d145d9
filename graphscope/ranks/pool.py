"""A job's rank files read on this machine by a few worker processes: the default engine of a rank job
(ranks/job.py; Dask serves a running scheduler). Measured on 2 cores (benchmarks/ranks.py): Dask's
local cluster cost 1.3-2.9 s before the first rank was read (importing distributed 0.4 s, starting a
nanny and a worker process per core 0.7-1.7 s, closing 0.3 s), more than a job of small ranks takes
serially; a fork server with the readers imported starts in about 0.3 s, its workers in milliseconds.

Each worker is forked from a fork server that imported the reader's modules (so no worker imports them
again), reads one file at a time and sends back its rows. A worker that dies reading a file
(killed, out of memory, crashed) is replaced and the file given to another worker; one that kills
RETRIES + 1 workers comes back as an error row naming it, and the other files are read all the same.
Workers start with SIGINT blocked: a Ctrl-C reaches only this process, which kills them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

RETRIES = 1  # a file whose reading kills its worker is tried on one more worker, then named and left out
THREADS_ENV = "GRAPHSCOPE_READ_THREADS"  # the SQLite reader's threads (trace/bulk.read_threads)
PRELOAD = [  # what a worker needs, imported once by the fork server (0.25 s of CPU; a plain pool pays it in each)
    "graphscope.ranks.job", "graphscope.analysis.rank_steps", "graphscope.analysis.summary", "graphscope.ranks.modes",
    "graphscope.trace.reader", "graphscope.trace.kineto",
]  # fmt: skip
SQLITE_PRELOAD = ["connectorx", "pyarrow"]  # 44 MB resident: only for a job with Nsight exports
JSON = (".json", ".json.gz")
# CPU seconds a rank file costs to read and reduce, per MB of file (2-core host, warm imports; HTA's 1.8 MB
# gzipped 109k-event trace 0.55 s, a 1.8 MB H200 Nsight export 0.06-0.10 s, a 112 MB 1M + 1M-row one 1.5 s),
# plus a fixed cost per file; and what starting workers costs (each forked worker imports the readers,
# 0.25 s of CPU, side by side; a fork server imports them once, 0.35 s with its Python, before any worker).
SECONDS_PER_MB = {".gz": 0.35, ".json": 0.02, ".sqlite": 0.03}
SECONDS_PER_FILE = 0.03
START_SECONDS = 0.35

Reader = Callable[[str, str | None], list[dict[str, Any]]]


def died(times: int | None = RETRIES + 1) -> str:
    """What a file whose reading killed its worker says."""
    count = f"{times} times: " if times else ""
    return f"its worker died reading it ({count}killed, out of memory or crashed)"


def cores() -> int:
    """The cores this process may run on (a container or `taskset` may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def worth_workers(paths: list[str], workers: int) -> bool:
    """Whether reading these files in `workers` processes saves more than starting them costs: the files'
    estimated serial time (by size and kind) times (1 - 1 / workers) against START_SECONDS. An .nsys-rep
    (converted by nsys first, seconds each) always is."""
    if workers < 2 or len(paths) < 2:
        return False
    serial = 0.0
    for path in paths:
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in SECONDS_PER_MB:
            return True
        try:
            size = os.path.getsize(path) / 1e6
        except OSError:
            size = 0.0
        serial += SECONDS_PER_FILE + size * SECONDS_PER_MB[suffix]
    return serial * (1 - 1 / workers) > START_SECONDS


def _single_threaded() -> bool:
    """Whether this process runs one thread only (Linux: /proc/self/task), so that forking it is safe."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _context(paths: list[str]) -> Any:
    """Workers forked from this process while it runs one thread (the command line: each worker imports the
    readers itself, the workers side by side), else from a fork server (a fresh process that imports the
    readers once): once this process has read a trace, connectorx's thread pool lives in it, and a
    worker forked from it spun forever on its first read (measured: pytest, in-process tests before a job).
    The fork server costs its start-up first (0.35 s of CPU), the workers none (measured on 2 cores under
    load, kineto2: the fork server's job 1.1-1.2x a plain pool's wall at the same CPU)."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and _single_threaded():
        return multiprocessing.get_context("fork")
    if "forkserver" not in methods:  # not Linux or macOS
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    sqlite = any(not p.lower().endswith(JSON) for p in paths)
    context.set_forkserver_preload(PRELOAD + (SQLITE_PRELOAD if sqlite else []))  # a missing one is skipped
    return context


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked while workers start: they inherit the blocked mask (across fork and exec, and for
    workers started later), so a Ctrl-C reaches only this process's main thread, which closes them
    quietly; one pressed meanwhile is delivered on leaving."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _serve(conn: Connection, reader: Reader, step: str | None, threads: int) -> None:
    """A worker: read each path sent, send back its rows, until told to stop (None) or orphaned."""
    os.environ[THREADS_ENV] = str(threads)
    while True:
        try:
            path = conn.recv()
        except (EOFError, OSError):
            return
        if path is None:
            return
        try:
            rows = reader(path, step)
        except Exception as exc:  # a reader of a test's, say: named for its file, as rank_rows names its own
            rows = [{"path": path, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}]
        conn.send(rows)


@dataclass
class _Worker:
    process: Any  # multiprocessing.Process
    conn: Connection
    path: str | None = None


def read_in_processes(paths: list[str], step: str | None, reader: Reader, workers: int) -> list[dict[str, Any]]:
    """Every file's rows, read by `workers` forked processes (each reading with cores // workers SQLite
    threads, at least one); in the order the files finish."""
    workers = max(1, min(workers, len(paths)))
    context = _context(paths)
    threads = max(1, cores() // workers)
    todo, tries = deque(paths), Counter[str]()
    rows: list[dict[str, Any]] = []
    pool: list[_Worker] = []

    def start() -> _Worker:
        mine, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, reader, step, threads), daemon=True)
        with sigint_held():
            process.start()
        theirs.close()
        return _Worker(process, mine)

    def feed(worker: _Worker) -> bool:
        """The next file to this worker; False (and the worker told to stop) when none is left."""
        worker.path = todo.popleft() if todo else None
        with contextlib.suppress(OSError):
            worker.conn.send(worker.path)
        return worker.path is not None

    try:
        pool = [start() for _ in range(min(workers, len(paths)))]
        busy = [w for w in pool if feed(w)]
        while busy:
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for worker in [w for w in busy if w.conn in ready or w.process.sentinel in ready]:
                try:
                    rows += worker.conn.recv()
                except (EOFError, OSError, ValueError, pickle.UnpicklingError):  # it died reading its file
                    assert worker.path is not None
                    tries[worker.path] += 1
                    if tries[worker.path] > RETRIES:
                        rows.append({"path": worker.path, "error": died()})
                    else:
                        todo.append(worker.path)
                    busy.remove(worker)
                    worker.process.join()
                    worker.conn.close()
                    if todo:
                        fresh = start()
                        pool.append(fresh)
                        busy.append(fresh)
                        feed(fresh)
                    continue
                if not feed(worker):
                    busy.remove(worker)
    finally:
        for worker in pool:  # done: each was told to stop; interrupted or failed: killed
            if worker.path is not None and worker.process.is_alive():
                worker.process.kill()
            worker.process.join(timeout=5)
            worker.conn.close()
    return rows
