"""core/sets.py answers as NumPy's set operations do, and never imports numpy.ma."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from graphscope.core import sets

integers = arrays(np.int64, st.integers(0, 60), elements=st.integers(-(2**40), 2**40))
small = arrays(np.int32, st.integers(0, 60), elements=st.integers(-5, 30))  # NumPy's table method
floats = arrays(np.float64, st.integers(0, 40), elements=st.floats(allow_nan=True, allow_infinity=True, width=32))


@settings(max_examples=150, deadline=None)
@given(st.one_of(integers, small, floats), st.one_of(integers, small, floats), st.booleans())
def test_every_operation_answers_as_numpy(first, second, invert):
    np.testing.assert_array_equal(sets.unique(first), np.unique(first))
    np.testing.assert_array_equal(sets.isin(first, second, invert=invert), np.isin(first, second, invert=invert))
    np.testing.assert_array_equal(sets.intersect(first, second), np.intersect1d(first, second))
    np.testing.assert_array_equal(sets.difference(first, second), np.setdiff1d(first, second))
    np.testing.assert_array_equal(sets.union(first, second), np.union1d(first, second))


@settings(max_examples=80, deadline=None)
@given(arrays(np.int64, st.tuples(st.integers(0, 40), st.just(2)), elements=st.integers(-3, 3)))
def test_distinct_rows_as_numpy(rows):
    np.testing.assert_array_equal(sets.unique_rows(rows), np.unique(rows, axis=0).reshape(-1, 2))


def test_python_collections_are_taken_as_numpy_takes_them():
    assert sets.isin(np.array([1, 2, 3]), {3, 1}).tolist() == [True, False, True]
    assert sets.isin(np.array([1, 2, 3]), []).tolist() == [False, False, False]
    assert sets.unique([3, 1, 3]).tolist() == [1, 3]


def test_a_summary_of_either_kind_of_trace_never_imports_numpy_ma(tmp_path):
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    for trace in (data / "h200_seed_vecadd_graph.sqlite", data / "kineto" / "hta__rank0_of_16_graph_launches.json.gz"):
        probe = (
            "import sys, io, contextlib\n"
            "from graphscope.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['summary', '--json', '--no-cache', {str(trace)!r}])\n"
            "print('numpy.ma' in sys.modules)\n"
        )
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
        assert result.stdout.strip().splitlines()[-1] == "False", (trace.name, result.stderr[-2000:])


@settings(max_examples=150, deadline=None)
@given(st.one_of(integers, small, floats))
def test_the_median_answers_as_numpys_nan_and_empty_included(values):
    import warnings

    from graphscope.core.stats import median_of

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "mean of empty slice"
        expected = float(np.median(values))
    np.testing.assert_equal(median_of(values) + 0.0, expected + 0.0)  # a signed zero aside
