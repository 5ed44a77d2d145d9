"""Windows of an export too large to hold: consecutive windows partition the rows of every table."""

from __future__ import annotations

import numpy as np

from graphscope.trace import load_trace
from graphscope.trace.database import ExportDatabase
from graphscope.trace.window import plan_window, rowid_at
from tests.conftest import H200_NODE, TORCH_MLP


def test_a_file_that_fits_gets_no_window():
    with ExportDatabase(H200_NODE) as db:
        assert plan_window(db, max_events=10**9) is None


def test_consecutive_windows_read_every_row_once():
    whole = load_trace(H200_NODE)
    with ExportDatabase(H200_NODE) as db:
        windows = [plan_window(db, max_events=4000)]
        while windows[-1].end <= windows[-1].last:
            windows.append(plan_window(db, max_events=4000, start=windows[-1].end))
    assert len(windows) >= 3 and all(w.events <= 4600 for w in windows)
    parts = [load_trace(H200_NODE, window=w) for w in windows]
    for key in ("api", "kernels"):
        starts = np.concatenate([getattr(p, key).start for p in parts])
        assert np.array_equal(np.sort(starts), np.sort(getattr(whole, key).start)), key
    assert all(p.info.window and "read a window of the file" in p.info.warnings[-1] for p in parts)


def test_deferred_columns_stay_inside_the_window():
    with ExportDatabase(TORCH_MLP) as db:
        window = plan_window(db, max_events=200)
    part = load_trace(TORCH_MLP, window=window)
    assert len(part.kernels) and len(part.kernels.grid_x) == len(part.kernels)  # loaded later, same rows
    assert (part.kernels.start >= window.start).all() and (part.api.start < window.end).all()


def test_a_time_maps_to_the_first_row_at_or_after_it():
    with ExportDatabase(H200_NODE) as db:
        table = db.resolve_table("CUPTI_ACTIVITY_KIND_KERNEL")
        starts = [row[0] for row in db.query(f'SELECT start FROM "{table}" ORDER BY rowid')]
        for index in (0, 1, 500, len(starts) - 1):
            assert rowid_at(db, table, starts[index]) == index + 1  # rowids count from 1
        assert rowid_at(db, table, starts[-1] + 1) == len(starts) + 1
