"""The timeline's x axis: nanoseconds from the layout's origin (trace time of x = 0), in one place.

Every face that turns trace time into a position on the timeline, or a position back into trace time
(lanes, brackets, gaps, the scope's shading, fitting the view, a drag on the time axis, the overview,
the scope banner, Details), goes through `x_of` / `ns_of`. Trace times are int64 nanoseconds since
the capture's epoch (10^18 and more); a float64 holds integers exactly only to 2^53, so the origin is
subtracted as integers first and the difference (a few seconds: ~10^10) cast after.
"""

from __future__ import annotations

from typing import overload

import numpy as np


@overload
def x_of(ns: int | np.integer, origin: int) -> float: ...
@overload
def x_of(ns: np.ndarray, origin: int) -> np.ndarray: ...
def x_of(ns, origin: int):
    """Timeline x (float64 ns from `origin`) of trace times: exact for an array, as for one time."""
    if isinstance(ns, np.ndarray):
        return np.subtract(ns, origin, out=np.empty(ns.shape, np.float64), casting="unsafe")
    return float(int(ns) - int(origin))


def ns_of(x: float, origin: int) -> int:
    """Trace time (int ns) of a timeline x: whole nanoseconds, truncated toward zero as before."""
    return int(origin) + int(x)


def x_span(first: int, last: int, origin: int) -> tuple[float, float]:
    """Timeline x of a span of trace time, at least 1 ns wide (an empty span still has a view)."""
    low = x_of(first, origin)
    return low, max(x_of(last, origin), low + 1)
