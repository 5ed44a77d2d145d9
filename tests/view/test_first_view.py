"""The first view fits the activity: dense launches and GPU work, not sparse start-up."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphscope.analysis import focus
from graphscope.analysis.focus import FOCUS_SPARSENESS, activity_window, densest_run
from graphscope.view.document import open_document

DATA = Path(__file__).resolve().parents[1] / "data"


def fake(starts: np.ndarray, span: tuple[int, int]):
    """A trace and analysis holding only the columns activity_window reads."""
    starts = np.sort(np.asarray(starts, dtype=np.int64))
    api = SimpleNamespace(start=starts, end=starts + 1)
    trace = SimpleNamespace(api=api, span=lambda: span)
    work = SimpleNamespace(start=np.zeros(0, np.int64), end=np.zeros(0, np.int64))
    analysis = SimpleNamespace(launches=SimpleNamespace(rows=np.arange(len(starts))), work=work)
    return trace, analysis


def test_start_up_is_left_out_of_the_first_view():
    document = open_document(DATA / "h200_seed_vecadd_node.sqlite", panels=False)
    low, high = document.focus
    first, last = document.trace.span()
    assert (high - low) < 0.15 * (last - first)  # module loading and set-up copies dwarf the steps
    analysis = document.analysis
    starts = np.concatenate([document.trace.api.start[analysis.launches.rows], analysis.work.start])
    assert ((starts >= low) & (starts <= high)).mean() > 0.99  # yet nearly every launch is in view


def test_a_trace_dense_throughout_is_shown_whole():
    starts = np.arange(0, 1_000_000, 1000)
    trace, analysis = fake(starts, (0, 1_000_000))
    low, high = activity_window(trace, analysis)
    assert low == 0 and high >= 999_000


def test_a_dense_burst_after_sparse_set_up_is_what_is_shown():
    sparse = np.arange(0, 10_000_000, 500_000)  # 20 set-up calls over 10 ms
    burst = np.arange(10_000_000, 10_100_000, 100)  # 1000 launches in 0.1 ms
    trace, analysis = fake(np.concatenate([sparse, burst]), (0, 10_100_000))
    low, high = activity_window(trace, analysis)
    assert low >= 9_500_000 and high >= 10_099_900


@pytest.mark.parametrize("extreme", [np.iinfo(np.int64).min + 1, 0])
def test_timestamps_spanning_all_of_int64_do_not_overflow(extreme):
    starts = np.concatenate([[extreme], np.arange(100), [np.iinfo(np.int64).max - 1]])
    trace, analysis = fake(starts, (int(starts.min()), int(starts.max())))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = activity_window(trace, analysis)
    assert low <= high


def reference_window(starts: np.ndarray) -> tuple[int, int]:
    """The running sum over the whole array at once (what densest_run computes block by block)."""
    offsets = starts.astype(np.float64) - float(starts[0])
    value = np.arange(len(starts)) - offsets * (FOCUS_SPARSENESS * (len(starts) - 1) / offsets[-1])
    lowest = np.minimum.accumulate(value)
    last = int(np.argmax(value - lowest))
    return int(np.flatnonzero(value[: last + 1] == lowest[last])[0]), last


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=2, max_size=400),  # gaps between events; repeats make ties
    st.sampled_from([1, 3, 7, 64]),
)
def test_the_densest_run_block_by_block_is_the_whole_array_answer(gaps, block):
    starts = np.cumsum(np.asarray(gaps, dtype=np.int64))
    if starts[-1] <= starts[0]:
        return
    with patch.object(focus, "BLOCK", block):
        assert densest_run(starts) == reference_window(starts)


def test_the_window_ends_where_its_last_work_ends():
    starts = np.arange(0, 100_000, 100)
    trace, analysis = fake(starts, (0, 200_000))
    analysis.work.start = np.array([50_000], np.int64)
    analysis.work.end = np.array([150_000], np.int64)  # one long kernel in the middle of the calls
    low, high = activity_window(trace, analysis)
    assert low == 0 and high == 150_000


def test_kernel_names_are_read_only_when_a_kernel_lacks_its_mangled_name():
    """The first frame and the Kernels table key kernels by mangled name: demangled names stay on disk
    unless some kernel has none (then they identify it)."""
    mangled = open_document(DATA / "cestwc__balinski-and-gomory-cuda__report1.sqlite")  # the panels built too
    assert "name" in mangled.trace.kernels.deferred and len(mangled.stats)
    unmangled = open_document(DATA / "PolPuigPuy__OpenACC_Project_PolPuig__report2.sqlite")
    assert "name" not in unmangled.trace.kernels.deferred and len(unmangled.stats)


def test_graph_replays_after_the_eager_steps_are_in_the_first_view():
    """Three replays traced as one GPU item each rival 4000 eager launches in GPU time, not in count."""
    document = open_document(DATA / "h200_seed_vecadd_graph.sqlite", panels=False)
    low, high = document.focus
    work = document.analysis.work
    assert high >= int(work.end.max()) - 1  # the last replay ends in view
    assert low <= int(np.median(work.start))  # and the eager steps are still there


def test_a_long_module_load_between_steps_does_not_fill_the_first_view():
    """cuLibraryLoadData runs 14 ms between the eager steps and the replays: the view keeps one side."""
    document = open_document(DATA / "h200_torch_mlp_node.sqlite", panels=False)
    low, high = document.focus
    api = document.trace.api
    inside = (api.start >= low) & (api.end <= high)
    longest = float((api.end - api.start)[inside].max())
    assert longest < 0.5 * (high - low)  # no single call is most of the view
    work = document.analysis.work
    assert ((work.start >= low) & (work.start <= high)).sum() >= 50  # the kernels are in it, not specks


def test_a_window_that_is_mostly_one_gap_keeps_its_busier_side():
    starts = np.concatenate([np.arange(0, 100_000, 1000), np.arange(900_000, 1_000_000, 1000)])
    trace, analysis = fake(starts, (0, 1_000_000))
    long_right = np.arange(900_000, 1_000_000, 1000)
    analysis.work = SimpleNamespace(start=long_right, end=long_right + 900)  # busy on the right only
    low, high = activity_window(trace, analysis)
    assert low >= 900_000 and high >= 999_000
