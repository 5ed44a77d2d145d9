"""Settings of graphscope's own process, made at its entry point before numpy loads.

- numpy's OpenBLAS starts a thread per core when it loads, and those threads spin waiting for
  matrix work graphscope never gives them: on a 2-core machine that took a tenth of a second of CPU
  from the readers and the analysis of every command. graphscope does no CPU linear algebra, so its
  own process runs OpenBLAS on one thread; workload children get the user's setting back
  (`user_environment`).
- glibc hands freed blocks of a few MiB straight back to the kernel, so every temporary array of a
  million-event column is fresh memory the kernel zeroes again (a tenth of a summary's CPU time went
  to zeroing pages). graphscope keeps up to KEEP_FREED bytes of freed memory for reuse.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1"}
KEEP_FREED = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
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
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
    mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)


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
