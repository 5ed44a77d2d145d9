"""Per-window accounting: end to end = busy + waiting for the CPU + other idle, exactly."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphscope.analysis import accounting
from graphscope.analysis.accounting import Timeline
from graphscope.analysis.summary import summarize
from graphscope.trace import load_trace
from tests.conftest import DATA

items = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12), st.integers(-1, 80)), max_size=25)


def brute(events, low, high):
    """Nanosecond by nanosecond: busy if any event covers t; idle stretches classified by the item that
    opens the next busy stretch (its launch call returned after the stretch began: waiting)."""
    events = sorted(events, key=lambda e: e[0])
    busy = [any(s <= t < s + d for s, d, _ in events) for t in range(low, high)]
    total = {"busy": sum(busy), "wait": 0, "other": 0}
    t = low
    while t < high:
        if busy[t - low]:
            t += 1
            continue
        begin = t
        while t < high and not busy[t - low]:
            t += 1
        if t < high:
            following = next(e for e in events if e[0] <= t < e[0] + e[1])
            following = min((e for e in events if e[0] == t and e[1] > 0), key=events.index, default=following)
        else:
            following = next((e for e in events if e[0] >= high), None)
        waiting = following is None or (following[2] >= 0 and following[2] >= begin)
        total["wait" if waiting else "other"] += t - begin
    return total


@contextmanager
def chunks_of(size: int):
    """Accounts a few items at a time (holes cut by chunk bounds), as 10M-item windows are."""
    kept, accounting.STEP_ROWS = accounting.STEP_ROWS, size
    try:
        yield
    finally:
        accounting.STEP_ROWS = kept


@pytest.mark.parametrize("chunk", [1 << 20, 2])
@settings(max_examples=300, deadline=None)
@given(events=items, low=st.integers(0, 40), width=st.integers(1, 50))
def test_the_parts_add_up_and_match_a_nanosecond_count(chunk, events, low, width):
    with chunks_of(chunk):
        _check_window(events, low, width)


def _check_window(events, low, width):
    high = low + width
    events.sort(key=lambda e: e[0])
    start = np.array([e[0] for e in events], dtype=np.int64)
    end = start + np.array([e[1] for e in events], dtype=np.int64)
    timeline = Timeline(start, end, np.array([e[2] for e in events], dtype=np.int64))
    account = timeline.account(low, high)
    assert account.wall_ns == account.busy_ns + account.host_wait_ns + account.other_ns == width
    expected = brute(events, low, high)
    assert (account.busy_ns, account.host_wait_ns, account.other_ns) == (
        expected["busy"],
        expected["wait"],
        expected["other"],
    )


whole_items = st.lists(st.tuples(st.integers(5, 60), st.integers(1, 12), st.integers(-1, 80)), min_size=1, max_size=25)


@pytest.mark.parametrize("chunk", [1 << 20, 3])
@settings(max_examples=200, deadline=None)
@given(events=whole_items, before=st.integers(0, 5), after=st.integers(0, 10))
def test_a_window_holding_every_item_whole_counts_as_a_nanosecond_count(chunk, events, before, after):
    """The path that reads the items in place (no clipping, no copies: the whole trace) is exact too."""
    with chunks_of(chunk):
        _check_whole(events, before, after)


def _check_whole(events, before, after):
    events.sort(key=lambda e: e[0])
    start = np.array([e[0] for e in events], dtype=np.int64)
    end = start + np.array([e[1] for e in events], dtype=np.int64)
    low, high = int(start.min()) - before, int(end.max()) + after
    account = Timeline(start, end, np.array([e[2] for e in events], dtype=np.int64)).account(low, high)
    expected = brute(events, low, high)
    assert (account.busy_ns, account.host_wait_ns, account.other_ns) == (
        expected["busy"],
        expected["wait"],
        expected["other"],
    )


def _sql_busy(path, low, high):
    """GPU busy time in [low, high) from plain SQL rows and a plain loop over their union."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = []
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            if table in tables:
                rows += conn.execute(f'SELECT start, "end" FROM {table} WHERE start < ? AND "end" > ?', (high, low))
    busy, reach = 0, low
    for start, end in sorted((max(s, low), min(e, high)) for s, e in rows):
        if end > reach:
            busy += end - max(start, reach)
            reach = end
    return busy


@pytest.mark.parametrize(
    "name",
    [
        "h200_seed_vecadd_node.sqlite",
        "h200_forkjoin_node.sqlite",
        "h200_torch_mlp_node.sqlite",
        "Lianhang666__gpu4__report2.sqlite",
        "cestwc__balinski-and-gomory-cuda__report1.sqlite",
        "nikitinvv__recon-stream__report13.sqlite",
    ],
)
def test_the_summary_adds_up_and_agrees_with_plain_sql(name):
    trace = load_trace(DATA / name)
    summary = summarize(trace, whole=True)
    low, high = trace.span()
    for gpu in summary["gpu"]:
        assert gpu["busy_ns"] + gpu["host_wait_idle_ns"] + gpu["other_idle_ns"] == summary["span_ns"]
        assert gpu["idle_ns"] == gpu["host_wait_idle_ns"] + gpu["other_idle_ns"]
    if len(summary["gpu"]) == 1:
        assert summary["gpu"][0]["busy_ns"] == _sql_busy(DATA / name, low, high)
