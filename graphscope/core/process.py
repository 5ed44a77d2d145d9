"""Settings of graphscope's own process, made at its entry point before numpy loads.

- numpy's OpenBLAS starts a thread per core when it loads, and those threads spin waiting for
  matrix work graphscope never gives them: on a 2-core machine that took a tenth of a second of CPU
  from the readers and the analysis of every command. graphscope does no CPU linear algebra, so its
  own process runs OpenBLAS on one thread; workload children get the user's setting back
  (`user_environment`).
- glibc hands freed blocks of a few MiB straight back to the kernel, so every temporary array of a
  million-event column is fresh memory the kernel zeroes again (a tenth of a summary's CPU time went
  to zeroing pages). graphscope keeps up to KEEP_FREED bytes of freed memory for reuse.
- A command that answers and exits runs in one malloc arena (`one_arena`): glibc gives each thread that
  allocates its own, so what the reader threads freed (connectorx's int64 columns, once narrowed) was
  never reused by the analysis on the main thread, which faulted in fresh pages instead. 1M + 1M cold
  summary, 3 interleaved rounds: 43-52k minor faults against 66k, peak 203-240 MB against 262 MB,
  system time 0.19-0.28 s against 0.30-0.35 s.
- The analyses of such a command (`heap_only`) also keep arrays of over 32 MiB (glibc's largest
  threshold) in the heap: glibc maps each such block afresh and unmaps it when freed, so at 10M events
  every temporary column of the analysis was new pages (475k of the cold summary's 890k minor faults,
  0.84 s of system time). With one arena and this, benchmarks/memory_scale.py, 2 rounds: system time
  133, 103, 97 ns/event at 2M, 6M, 20M events against 170, 110, 142; at 20M 20 minor faults per 1k
  events against 44, peak 55.1 B/event against 57.4 (benchmarks/RESULTS.md, round 5).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1"}
KEEP_FREED = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -3, -4, -8  # mallopt parameters (malloc.h)
_MMAP_MAX_DEFAULT = 65536  # glibc's own M_MMAP_MAX
_MMAP_THRESHOLD_MAX = 32 << 20  # glibc's largest on 64-bit: bigger blocks are always mapped
_set_here: set[str] = set()
BEHIND_NICE = 10
"""How far below the GUI thread the reads and analyses of an opened file run (Linux nice steps: a nice 10
thread weighs about a tenth of a nice 0 one when both want a core)."""


def prepare() -> None:
    """Set the environment graphscope's own process runs best in; a user's own setting wins."""
    _keep_freed_memory()
    if "numpy" in sys.modules:  # too late: the thread pool already started
        return
    for name, value in _ONE_THREAD.items():
        if name not in os.environ:
            os.environ[name] = value
            _set_here.add(name)


def _keep_freed_memory() -> None:
    """glibc only (musl and other systems have no mallopt, or need none); a user's MALLOC_* wins."""
    if any(name.startswith("MALLOC_") for name in os.environ):
        return
    keep_freed_memory()


def keep_freed_memory() -> None:
    """Keep freed memory for reuse in this process whatever its environment says: for the Dask workers that
    read rank traces, whose nanny sets MALLOC_TRIM_THRESHOLD_=65536 (measured: a 250,000-event rank took
    9.3-11.7 s in such a worker against 3.1-3.6 s in a plain process)."""
    if not sys.platform.startswith("linux"):
        return
    mallopt = _mallopt()
    if mallopt is None:
        return
    global _keeping
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
    mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)
    _keeping = True


@contextlib.contextmanager
def one_arena() -> Iterator[None]:
    """One malloc arena for the threads of a command that answers and exits (cli/common.one_shot; see the
    module's note), glibc's own choice again after it. Not for a window: its GUI thread then waited on the
    arena's lock while a background analysis allocated, and full redraws of a 10M + 10M timeline drawn
    during that work took up to 195 ms (medians 3.5-7.1 ms) against 15 ms (2.5-4.7 ms) with an arena a
    thread (benchmarks/timeline_frames.py)."""
    mallopt = None if any(name.startswith("MALLOC_") for name in os.environ) else _mallopt()
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, 1)
    try:
        yield
    finally:
        if mallopt is not None:
            mallopt(_M_ARENA_MAX, 0)  # 0: unset, glibc's default by core count


def _mallopt() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return None


_heap_users = 0
_ending = False
_keeping = False  # keep_freed_memory has set glibc's thresholds
_SMALL_TOP = 1 << 20  # the heap's free top a reader of small buffers keeps
_NEVER = (1 << 31) - 1  # mallopt takes an int
_heap_lock = threading.Lock()


@contextlib.contextmanager
def heap_only() -> Iterator[None]:
    """In a command that answers and exits (`ends_after`), large arrays made inside this block come from
    the heap, never from a mapping of their own, and the heap's free top is kept (see the module's note);
    glibc's settings come back when the last block open ends. For the analyses, not the reads: the read's
    wide columns, freed once narrowed, would stay resident as holes in the heap while the next table's
    columns take fresh pages (10M + 10M: the read's peak 1.04 GB in the heap against 0.79 GB mapped).
    A window keeps glibc's own settings: its analyses run on threads with arenas of their own, and a
    setting of the whole process beside its GUI thread is not worth a frame. Threads share it: the first
    block in sets, the last one out restores."""
    global _heap_users
    mallopt = None if not _ending or any(name.startswith("MALLOC_") for name in os.environ) else _mallopt()
    if mallopt is None:
        yield
        return
    with _heap_lock:
        _heap_users += 1
        if _heap_users == 1:
            mallopt(_M_MMAP_MAX, 0)
            mallopt(_M_TRIM_THRESHOLD, _NEVER)  # a freed column at the heap's top is the next one's memory
    try:
        yield
    finally:
        with _heap_lock:
            _heap_users -= 1
            if not _heap_users:
                mallopt(_M_MMAP_MAX, _MMAP_MAX_DEFAULT)
                mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)


@contextlib.contextmanager
def ends_after() -> Iterator[None]:
    """A command whose process exits when it has answered (cli/common.one_shot): `heap_only` applies."""
    global _ending
    was, _ending = _ending, True
    try:
        yield
    finally:
        _ending = was


@contextlib.contextmanager
def give_back_freed() -> Iterator[None]:
    """In a command that answers and exits (`ends_after`; a window keeps its settings), inside this block
    the heap's free top goes back to the system past 1 MiB, not KEEP_FREED; when it ends, what the block
    freed goes back too (`malloc_trim`). For a reader whose buffers are small and
    short-lived (the Kineto JSON's 256 KiB batches and their decoded events), where KEEP_FREED only piled
    them up. HTA's 109k-event graph-launch trace: peak 44.0 MiB against 47.5 MiB (1 MB of it sqlite3, no
    longer imported for such a trace), the same CPU time; at 1.09M events 2.7 s either way. glibc's own
    128 KiB thresholds for mapping and trimming cut the peak as far but mapped every batch's buffers
    afresh: 1.09M events 5.1 s against 2.9 s (`_streamed`'s byte joins and zlib's output faulting in new pages)."""
    mallopt = _mallopt() if _keeping and _ending else None
    if mallopt is not None:
        mallopt(_M_TRIM_THRESHOLD, _SMALL_TOP)
    try:
        yield
    finally:
        if mallopt is not None:
            mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)
            _malloc_trim()


def _malloc_trim() -> None:
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        return


def user_environment() -> dict[str, str]:
    """The environment as the user gave it: what `prepare` set for this process left out."""
    return {name: value for name, value in os.environ.items() if name not in _set_here}


def lower_this_threads_priority() -> None:
    """This thread BEHIND_NICE below the process's main thread (on Linux a nice value is a thread's own, and
    the threads it starts inherit it); nothing where the system has no per-thread priority or refuses."""
    if not sys.platform.startswith("linux"):
        return
    try:
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + BEHIND_NICE)
        thread = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, thread) < target:
            os.setpriority(os.PRIO_PROCESS, thread, target)
    except OSError:
        return
