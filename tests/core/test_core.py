from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphscope.core import stats
from graphscope.core.symbols import SymbolTable, display_api_name
from graphscope.core.table import Table
from graphscope.core.units import format_bytes, format_ns, time_unit


def test_table_columns_take_and_sort():
    table = Table({"start": np.array([3, 1, 2]), "name": np.array([30, 10, 20])})
    assert len(table) == 3 and table.start.tolist() == [3, 1, 2]
    ordered = table.sorted_by("start")
    assert ordered.name.tolist() == [10, 20, 30]
    assert table.take(np.array([True, False, True])).name.tolist() == [30, 20]
    with pytest.raises(ValueError, match="differ in length"):
        Table({"a": np.zeros(2), "b": np.zeros(3)})
    with pytest.raises(AttributeError):
        _ = table.missing


def test_symbol_table_interns_once_and_reports_dangling_ids():
    symbols = SymbolTable(["[Unknown]", "vec_add"])
    assert symbols.intern("vec_add") == 1 and symbols.intern("relu") == 2 and len(symbols) == 3
    assert symbols.name(99) == "[unknown #99]"
    assert symbols.valid(np.array([-1, 0, 2, 3])).tolist() == [False, True, True, False]
    assert display_api_name("cudaLaunchKernel_v7000") == "cudaLaunchKernel"
    assert display_api_name("cuLaunchKernel") == "cuLaunchKernel"


def test_units():
    assert format_ns(1_234_567) == "1.23 ms" and format_ns(960) == "960 ns" and format_ns(2.5e9) == "2.5 s"
    assert format_bytes(2 * 1024 * 1024) == "2 MiB" and format_bytes(12) == "12 B"
    assert time_unit(5e6) == (1e6, "ms") and time_unit(12) == (1.0, "ns")


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(-(2**53), 2**53), min_size=1, max_size=60)
    | st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=60)
)
def test_median_is_numpys_median(values):
    array = np.array(values)
    assert stats.median(array) == float(np.median(array))


def test_kernels_that_share_a_short_name_are_told_apart_by_their_template_arguments():
    from graphscope.core.symbols import kernel_labels

    kernel = "void at::native::vectorized_elementwise_kernel"
    fill = kernel + "<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int)"
    add = kernel + "<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)"
    labels = kernel_labels(["vectorized_elementwise_kernel"] * 2 + ["gemm"], [fill, add, "gemm"])
    assert labels == [
        "vectorized_elementwise_kernel ‹4, FillFunctor<float>, Array<char*, 1>›",
        "vectorized_elementwise_kernel ‹4, CUDAFunctor_add<float>, Array<char*, 3>›",
        "gemm",
    ]
    assert kernel_labels(["k", "k"], ["k(int)", "k(float)"]) == ["k #1", "k #2"]  # no templates: numbered
