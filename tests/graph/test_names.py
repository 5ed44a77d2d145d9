"""Kernel symbols made readable (libstdc++'s demangler through cxxfilt) and memcpy node directions."""

from __future__ import annotations

import sqlite3
import types

import pytest

from graphscope.graph.live import copy_direction
from graphscope.graph.names import demangle, readable
from tests.conftest import DATA


def _exported_pairs():
    """(mangled, demangled) symbols the shipped exports hold, as Nsight Systems recorded them."""
    pairs = set()
    for path in sorted(DATA.glob("*.sqlite")):
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            try:
                pairs |= set(
                    db.execute(
                        "SELECT DISTINCT m.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                        "JOIN StringIds m ON m.id = k.mangledName JOIN StringIds d ON d.id = k.demangledName"
                    ).fetchall()
                )
            except sqlite3.OperationalError:
                continue
    return sorted(pairs)


def test_every_mangled_symbol_of_the_shipped_exports_demangles_to_nsight_s_function():
    """A second way of getting the name: the function Nsight Systems' own demangled name ends in."""
    from graphscope.core.symbols import kernel_short_name

    pairs = [(m, d) for m, d in _exported_pairs() if m.startswith("_Z")]
    assert len(pairs) >= 50
    for mangled, nsight in pairs:
        short, full = readable(mangled)
        assert full is not None and short in full, mangled
        assert short == kernel_short_name(nsight), (mangled, full, nsight)


def test_plain_and_unreadable_symbols_stand_as_they_are():
    assert readable("vec_add") == ("vec_add", None)
    assert demangle("_Znot a symbol") is None
    assert readable(
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
    ) == (
        "vectorized_elementwise_kernel",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
    )


@pytest.mark.parametrize(
    "src, dst, resolved, expected",
    [
        (1, 2, None, "HtoD"),
        (2, 1, None, "DtoH"),
        (2, 2, None, "DtoD"),
        (4, 4, 1, "HtoH"),
        (4, 2, 1, "HtoD"),
        (4, 4, None, "UtoU"),
    ],
)
def test_a_memcpy_node_says_its_direction(src, dst, resolved, expected):
    params = types.SimpleNamespace(srcMemoryType=src, dstMemoryType=dst, srcDevice=0x10, dstDevice=0x20)
    driver = None
    if resolved is not None:  # a by-pointer copy: the driver says what memory each pointer is
        driver = types.SimpleNamespace(
            CUpointer_attribute=types.SimpleNamespace(CU_POINTER_ATTRIBUTE_MEMORY_TYPE=2),
            cuPointerGetAttribute=lambda attribute, pointer: (0, resolved),
        )
    assert copy_direction(params, driver) == expected
