"""Settings of graphscope's own process, made at its entry point before numpy loads.

numpy's OpenBLAS starts a thread per core when it loads, and those threads spin waiting for
matrix work graphscope never gives them: on a 2-core machine that took a tenth of a second of CPU
from the readers and the analysis of every command. graphscope does no CPU linear algebra, so its
own process runs OpenBLAS on one thread; workload children get the user's setting back
(`user_environment`).
"""

from __future__ import annotations

import os
import sys

_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1"}
_set_here: set[str] = set()


def prepare() -> None:
    """Set the environment graphscope's own process runs best in; a user's own setting wins."""
    if "numpy" in sys.modules:  # too late: the thread pool already started
        return
    for name, value in _ONE_THREAD.items():
        if name not in os.environ:
            os.environ[name] = value
            _set_here.add(name)


def user_environment() -> dict[str, str]:
    """The environment as the user gave it: what `prepare` set for this process left out."""
    return {name: value for name, value in os.environ.items() if name not in _set_here}
