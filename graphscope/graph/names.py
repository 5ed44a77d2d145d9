"""Kernel symbols as people read them: demangled by libstdc++'s own demangler (through `cxxfilt`), then
shortened as Nsight Systems shortens them (core.symbols.kernel_short_name).

A live graph's kernel nodes carry the symbol `cuFuncGetName` returns: mangled for C++ kernels
(`_ZN2at6native29vectorized_elementwise_kernelILi4E...`), plain for `extern "C"` ones. cxxfilt was
chosen by measurement: on the 53 mangled kernel symbols of the shipped exports its output equals
binutils' `c++filt` for all 53 (cpp_demangle 42, itanium_demangler failed on 4), at 4.2 us a name.
"""

from __future__ import annotations

from functools import lru_cache

from graphscope.core.symbols import kernel_short_name


@lru_cache(maxsize=65536)
def demangle(symbol: str) -> str | None:
    """The full C++ signature of a mangled symbol; None for one that is not mangled (or where cxxfilt
    is missing or cannot read it: the symbol then stands as it is)."""
    if not symbol.startswith("_Z"):
        return None
    try:
        import cxxfilt
    except ImportError:
        return None
    try:
        return str(cxxfilt.demangle(symbol))
    except Exception:  # cxxfilt.InvalidName, or no libstdc++ to load: keep the symbol
        return None


def readable(symbol: str) -> tuple[str, str | None]:
    """(the short name the DAG shows, the full demangled signature or None) of a kernel symbol."""
    full = demangle(symbol)
    return (kernel_short_name(full), full) if full else (symbol, None)
