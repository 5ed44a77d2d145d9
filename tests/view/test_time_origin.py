"""One time origin (view/time_origin.py): trace time <-> timeline x, exact at epoch-sized times, and
no face writes the shift by hand."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.view.time_origin import ns_of, x_of, x_span

PACKAGE = Path(__file__).resolve().parents[2] / "graphscope"
EPOCH = 1_764_000_000_000_000_000  # 2025 in ns since 1970: above 2^53, where float64 loses nanoseconds


@given(st.integers(0, 10**12), st.integers(0, 10**12))
def test_x_and_ns_round_trip_to_the_nanosecond_at_epoch_times(after, origin_after):
    origin = EPOCH + origin_after
    ns = EPOCH + after
    assert x_of(ns, origin) == after - origin_after
    assert ns_of(x_of(ns, origin), origin) == ns
    array = x_of(np.array([ns, ns + 1], dtype=np.int64), origin)
    assert array.dtype == np.float64 and array.tolist() == [after - origin_after, after - origin_after + 1]


def test_a_float_first_shift_would_lose_nanoseconds_this_one_keeps():
    ns = np.array([EPOCH + 1], dtype=np.int64)
    assert x_of(ns, EPOCH)[0] == 1.0
    assert ns.astype(np.float64)[0] - float(EPOCH) != 1.0  # why the origin goes first, as integers


def test_an_empty_span_is_one_ns_wide():
    assert x_span(EPOCH + 5, EPOCH + 5, EPOCH) == (5.0, 6.0)
    assert x_span(EPOCH, EPOCH + 9, EPOCH) == (0.0, 9.0)


HAND_SHIFT = re.compile(r"[-+]\s*(?:[\w.]+\.)?origin\b|\borigin\s*[-+]")


def test_no_face_shifts_the_origin_by_hand():
    found = []
    for folder in ("app", "view"):
        for path in (PACKAGE / folder).glob("*.py"):
            if path.name == "time_origin.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if HAND_SHIFT.search(line.split("#")[0]):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert not found, "use view.time_origin.x_of / ns_of:\n" + "\n".join(found)
