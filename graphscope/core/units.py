"""Time and size units: everything inside graphscope is integer nanoseconds and bytes."""

from __future__ import annotations

import math

_TIME_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns"))
_SIZE_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def format_ns(ns: float, digits: int = 3) -> str:
    """Format a duration given in nanoseconds with a readable unit: 1234567 -> '1.23 ms'."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    magnitude = abs(ns)
    for scale, unit in _TIME_UNITS:
        if magnitude >= scale or unit == "ns":
            value = ns / scale
            if unit == "ns" and float(value).is_integer():
                return f"{int(value)} ns"
            return f"{value:.{digits}g} {unit}"
    raise AssertionError("unreachable")


def format_time(ns: float) -> str:
    """A point in time (from a trace's start) to the nanosecond's precision the unit allows:
    746404123 -> '746.404123 ms'; durations use `format_ns`."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    scale, unit = time_unit(abs(ns))
    if unit == "ns":
        return f"{int(ns)} ns"
    places = {"s": 9, "ms": 6, "us": 3}[unit]
    return f"{int(ns) / scale:.{places}f} {unit}"


def format_bytes(count: float) -> str:
    """Format a byte count: 2097152 -> '2 MiB'."""
    for scale, unit in _SIZE_UNITS:
        if abs(count) >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{int(count)} B"


def time_unit(magnitude_ns: float) -> tuple[float, str]:
    """The unit to write a time of this size in: returns (scale in ns, unit name)."""
    for scale, unit in _TIME_UNITS:
        if magnitude_ns >= scale or unit == "ns":
            return scale, unit
    raise AssertionError("unreachable")
