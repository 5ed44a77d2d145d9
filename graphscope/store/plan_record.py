"""A stored plan record checked before it is re-planned or reported (`plan:ID`): the session database is
a file anyone can edit or damage, so a record that is not a plan, a measurement that is missing, and a
number that is not finite, negative where nothing can be, or past what a clock or a memory can hold are
refused in one line, never read into a traceback or a report of NaN (benchmarks/fuzz_ranks_plans.py)."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from graphscope.core.errors import BadInputError
from graphscope.core.rules import MAX_BATCH_SIZE as MAX_SIZE

MAX_QUANTITY = 2.0**63
"""The largest time (ns) or size (bytes) a record may hold: an int64's range, 292 years or 8 EiB."""
NEEDED = ("size", "eager_ns", "graph_ns", "capture_ns", "instantiate_ns", "upload_ns", "memory_bytes")
"""What re-planning reads of each measured size (plan/optimizer.py)."""
SCALARS = ("size", "eager_ns", "graph_ns", "expected_ns", "switch_ns", "predicted_ns", "memory_bytes",
           "startup_ns", "padding_waste", "eager_share", "saving")
"""The numbers of a plan's choices (best, all eager, compared, the frontiers) and per-size rows."""
REPORTED = ("workload", "reps", "verdict", "best", "all_eager", "per_size", "memory_frontier", "measurements")
"""What every stored plan holds and its report reads (report/plan_report.py)."""
SIGNED = {"saving", "pairs", "rotation", "served_switch_ns"}
"""Numbers that may be negative: a size that does not pay saves a negative share; the switch estimates
(workload/child/sizes.py) and the served switch cost are differences of two medians, below 0 when the
switch costs less than the noise (-112 ns for examples/batched_mlp.py on an H100)."""


def plan_record(text: Any, where: str) -> dict[str, Any]:
    """The stored JSON text as a checked plan record; BadInputError naming `where` (plan:ID in its
    database) and the first fault otherwise."""
    try:
        record = json.loads(text) if isinstance(text, str | bytes) else text
    except (ValueError, RecursionError):
        raise BadInputError(f"{where}: the stored plan is damaged (not JSON)") from None
    check_plan(record, where)
    return record


def check_plan(record: Any, where: str) -> None:
    """Refuse (BadInputError) a record that is not a plan graphscope could have stored."""

    def refuse(what: str) -> NoReturn:
        raise BadInputError(f"{where}: the stored plan is damaged ({what})")

    if not isinstance(record, dict):
        refuse(f"a {type(record).__name__}, not a plan")
    absent = [key for key in REPORTED if key not in record]
    if absent:
        refuse(f"no {', '.join(absent)}")
    measurements = record.get("measurements")
    if not isinstance(measurements, dict):
        refuse("no measured sizes")
    sizes = measurements.get("sizes")
    if not isinstance(sizes, list) or not sizes or not all(isinstance(s, dict) for s in sizes):
        refuse("no measured sizes")
    for number, measured in enumerate(sizes, 1):
        missing = [key for key in NEEDED if key not in measured]
        if missing:
            refuse(f"measured size {number} has no {', '.join(missing)}")
        size = measured["size"]
        if not _real(size) or not math.isfinite(size) or size != int(size) or not 1 <= size <= MAX_SIZE:
            refuse(f"measured size {number} is {str(size)[:30]!r}, not a batch size")
        for key in ("eager_ns", "graph_ns"):
            if not isinstance(measured[key], list) or not measured[key] or not all(map(_real, measured[key])):
                refuse(f"size {int(size)}: {key} holds no repetitions")
        for key in NEEDED[3:]:
            if not _real(measured[key]):
                refuse(f"size {int(size)}: {key} is {str(measured[key])[:30]!r}, not a number")
        if not isinstance(measured.get("outputs"), dict):
            refuse(f"size {int(size)}: no record of its outputs' check")
    switch = measurements.get("switch_ns", {})
    if not isinstance(switch, dict) or not all(map(_real, switch.values())):
        refuse("measurements.switch_ns holds no times")
    for name in ("best", "all_eager", "compared", "memory_frontier", "startup_frontier", "per_size"):
        found = record.get(name)
        options = found if isinstance(found, list) else [found] if found is not None else []
        for index, option in enumerate(options):
            if not isinstance(option, dict):
                refuse(f"{name} is not a choice of sizes")
            wrong = next((k for k in SCALARS if k in option and not _real(option[k])), None)
            if wrong:
                refuse(f"{name}{'.' + str(index) if isinstance(found, list) else ''}.{wrong} is "
                       f"{str(option[wrong])[:30]!r}, not a number")  # fmt: skip
    fault = _fault(record, ())
    if fault:
        refuse(fault)


def _real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fault(value: Any, path: tuple[str, ...]) -> str | None:
    """The first number that cannot be (path and value), or None. Times (`*_ns`) and sizes (`*_bytes`)
    are finite, not negative and at most MAX_QUANTITY; every other number is finite."""
    if isinstance(value, dict):
        for key, item in value.items():
            found = _fault(item, (*path, str(key)))
            if found:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _fault(item, (*path, str(index)))
            if found:
                return found
        return None
    key = next((p for p in reversed(path) if not p.isdigit()), "")
    named = [p for p in path if not p.isdigit()]  # switch_ns.pairs is a time too
    quantity = any(p.endswith(("_ns", "_bytes")) for p in named) or key in ("size", "sizes", "asked", "measured")
    shown = ".".join(path)[:60]
    if _real(value):
        if not math.isfinite(value):
            return f"{shown} is {value}"
        low = -MAX_QUANTITY if key in SIGNED else 0
        if quantity and not low <= value <= MAX_QUANTITY:
            return f"{shown} is {value:g}, outside {f'{low:.0e}' if low else 0} to {MAX_QUANTITY:.0e}"
        return None
    if quantity and value is not None:
        return f"{shown} is {str(value)[:30]!r}, not a number"
    return None
