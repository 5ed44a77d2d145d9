"""Request-size distributions: a CSV of sizes, a histogram, or the NVTX ranges of a trace whose names
carry the batch size ("decode bs=8", "batch_32")."""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

from graphscope.core.errors import BadInputError
from graphscope.core.rules import MAX_BATCH_SIZE

_SIZE_IN_NAME = re.compile(r"(?:bs|batch|size)\D{0,3}(\d+)", re.IGNORECASE)
TRACE_SUFFIXES = (".sqlite", ".nsys-rep", ".json", ".gz")
MAX_SIZE = MAX_BATCH_SIZE  # core/rules.py says why
MAX_WEIGHT = 1e15
"""The largest count (or relative weight) one line may give: a quadrillion requests. Above it the sums the
planner forms can overflow (two weights of 1e308 add to infinity, and every share becomes 0)."""


def read_traffic(path: Path) -> dict[int, float]:
    """size -> weight from a file: a trace (its NVTX range names), a 'size,count' histogram, or one size a
    line (or a 'size' column)."""
    if not path.is_file():
        raise BadInputError(f"--traffic {path}: no such file")
    if path.name.endswith(TRACE_SUFFIXES):
        return _from_trace(path)
    try:
        rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    except UnicodeDecodeError:
        raise BadInputError(f"--traffic {path}: not a text file of sizes (nor a trace)") from None
    traffic: defaultdict[int, float] = defaultdict(float)  # weights may be fractions
    header = [c.strip().lower() for c in rows[0]] if rows else []
    column = header.index("size") if "size" in header else 0
    count = header.index("count") if "count" in header else (1 if rows and len(rows[0]) > 1 else None)
    named = bool(header) and not header[column].isdigit()  # a header line: data starts on line 2
    for number, row in enumerate(rows[1:] if named else rows, 2 if named else 1):
        if not row or not "".join(row).strip():
            continue
        try:
            size = int(row[column])
            weight = float(row[count]) if count is not None and count < len(row) else 1.0
        except (ValueError, IndexError):
            raise BadInputError(f"--traffic {path}: line {number} is not a size (or size,count): {row}") from None
        _check(path, number, size, weight)
        traffic[size] += weight
    if not traffic or not math.fsum(traffic.values()) > 0:
        raise BadInputError(f"--traffic {path}: holds no request sizes (every count is 0)")
    if not math.isfinite(math.fsum(traffic.values())):
        raise BadInputError(f"--traffic {path}: the counts add up past what a float holds; give smaller weights")
    return dict(traffic)


def _check(path: Path, number: int, size: int, weight: float) -> None:
    """One line's size and count, refused in one line when outside what a request can be."""
    where = f"--traffic {path}: line {number}"
    if size < 1 or size > MAX_SIZE:
        raise BadInputError(f"{where}: a size is a whole number from 1 to {MAX_SIZE:,}, not {size}")
    if not math.isfinite(weight):
        raise BadInputError(f"{where}: the count {weight} is not a number of requests (write a finite count)")
    if weight < 0:
        raise BadInputError(f"{where}: counts are not negative ({weight:g})")
    if weight > MAX_WEIGHT:
        raise BadInputError(f"{where}: a count is at most {MAX_WEIGHT:.0e} requests, not {weight:g}")


def _from_trace(path: Path) -> dict[int, float]:
    from graphscope.analysis.scope import nvtx_ranges
    from graphscope.trace import load_trace

    trace = load_trace(path)
    texts = nvtx_ranges(trace)[0]
    traffic: Counter[int] = Counter()
    names = {int(t): trace.symbols.name(int(t)) for t in set(texts.tolist()) if t >= 0}
    for text in texts.tolist():
        found = _SIZE_IN_NAME.search(names.get(int(text), ""))
        if found and 0 < int(found.group(1)) <= MAX_SIZE:
            traffic[int(found.group(1))] += 1
    if not traffic:
        raise BadInputError(
            f"--traffic {path}: no NVTX range names a batch size (name them like 'decode bs=8' or 'batch_32')"
        )
    return dict(traffic)
