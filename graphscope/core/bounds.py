"""Physical bounds on what a trace may say, and sums that cannot wrap.

A trace is data from outside: a damaged or hostile file can give a kernel a duration of 46 days or a
negative one, and int64 nanoseconds wrap after 292 years, which three kernels of `"dur": 4e15` (us)
reach. Durations outside [0, LONGEST_EVENT_NS] count as 0, with a line in the trace's warnings (the
readers of both formats use `clamp_durations`, so the wording is one), and totals go through
`exact_total`, which cannot wrap.
"""

from __future__ import annotations

import numpy as np

from graphscope.core.units import format_ns

LONGEST_EVENT_NS = 86_400 * 10**9
"""No kernel, copy, call or range of a profiled run lasts a day (Nsight Systems and the PyTorch profiler
capture seconds to minutes); a longer one is a damaged value, not a measurement."""


def clamp_durations(key: str, start: np.ndarray, end: np.ndarray, warnings: list[str], ranges: bool = False) -> None:
    """Rows of table `key` that end before they start, or last longer than a day: their end becomes
    their start (duration 0, kept out of every sum), in place, each kind told once in `warnings`.
    `ranges`: an NVTX-like table, whose end of -1 (or below 0) means still open and is left as it is."""
    if not len(start):
        return
    negative = (end >= 0) & (end < start) if ranges else end < start
    if negative.any():
        warnings.append(f"{key}: {int(negative.sum())} rows end before they start; their durations count as 0")
        end[negative] = start[negative]
    duration = end.astype(np.float64) - start.astype(np.float64)  # float: end - start may itself wrap
    too_long = duration > LONGEST_EVENT_NS
    if ranges:
        too_long &= end >= 0
    if too_long.any():
        longest = format_ns(float(duration[too_long].max()))
        warnings.append(
            f"{key}: {int(too_long.sum())} rows last longer than a day (up to {longest}), which no profiled work "
            "does; their durations count as 0"
        )
        end[too_long] = start[too_long]


def exact_total(values: np.ndarray) -> int:
    """The sum of int64 `values` as an exact Python int, however large: NumPy's sum wraps silently past
    2**63. The fast path sums once; a float sum alongside tells whether that wrapped (it is within
    2**11 of the exact sum per 2**53, far from 2**64), and only then the high and low 32 bits are
    summed apart (each fits int64 for fewer than 2**31 rows) and joined as Python ints."""
    if not len(values):
        return 0
    values = np.asarray(values)
    if values.dtype.kind not in "iu":
        return int(values.sum())
    wide = values.astype(np.int64, copy=False)
    total = int(wide.sum())
    approx = float(wide.sum(dtype=np.float64))
    if abs(approx - total) <= 2.0**62:
        return total
    high = int((wide >> 32).sum())
    low = int((wide & 0xFFFFFFFF).sum())
    return (high << 32) + low
