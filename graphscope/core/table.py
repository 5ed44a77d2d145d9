"""Columnar event tables: one numpy array per column, all of one length. Never a Python object per row.

A table may also hold *deferred* columns: names it can produce but has not read yet. The first access
to any of them loads the whole deferred group in one pass (a reader reads only what a command needs
and leaves the rest to be loaded on demand or in the background).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping

import numpy as np

NULL = -1
"""Integer sentinel for a missing value (NULL in the export, no partner in a join)."""

Rows = np.ndarray | slice
"""Rows of a table: an index array, or slice(None) for every row (indexing with it is a view, not a copy)."""


def rows_where(mask: np.ndarray) -> Rows:
    """The rows where `mask` holds; slice(None) when it holds everywhere (one GPU, one thread, only launch
    calls: the usual trace), so that whole columns are used as they are instead of copied."""
    return slice(None) if bool(mask.all()) else np.flatnonzero(mask)


def row_numbers(rows: Rows, length: int) -> np.ndarray:
    """`rows` of a table of `length` rows as an index array."""
    return np.arange(length) if isinstance(rows, slice) else rows


STEP_ROWS = 1 << 20
"""Rows per step where a whole-column temporary would cost 76 MiB at 10M rows (accounts, kernel
statistics, latencies): bounded temporaries whatever the trace holds."""

_NARROW_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))


def narrowest(values: np.ndarray, default: int = NULL) -> np.ndarray:
    """Integer ids (devices, streams, correlation ids, row indices) in the narrowest signed dtype that
    holds them and `default`: a 10M-row trace's id columns cost what their values need (measured: 0.35 GiB
    less at 10M kernels + 10M calls). Other values are returned as they are."""
    if values.dtype.kind not in "iu" or values.dtype.itemsize == 1:
        return values
    low, high = (int(values.min()), int(values.max())) if len(values) else (default, default)
    low, high = min(low, default), max(high, default)
    for dtype in _NARROW_DTYPES:
        if dtype.itemsize >= values.dtype.itemsize:
            break
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values


def offsets_from(values: np.ndarray, low: int, high: int) -> np.ndarray:
    """`values - low` for values in [low, high], as indices in the narrowest unsigned type that holds
    high - low: exact whatever the values' own type (the subtraction wraps in the result's type, and
    every true difference fits it), where `values - low` in a narrow id type would overflow."""
    dtype = np.min_scalar_type(max(high - low, 0))
    shifted = values.astype(dtype)
    shifted -= dtype.type(low % (1 << (8 * dtype.itemsize)))
    return shifted


def within(values: np.ndarray, size: int) -> bool:
    """Whether every value is an index into `size` slots (two reductions, no mask)."""
    return not len(values) or (int(values.min()) >= 0 and int(values.max()) < size)


class Deferred:
    """Columns that load together on first use: `load()` returns them all, computed once, thread-safe."""

    def __init__(self, names: tuple[str, ...], loader: Callable[[], dict[str, np.ndarray]]) -> None:
        self.names = names
        self._loader = loader
        self._loaded: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def load(self) -> dict[str, np.ndarray]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._loader()
            return self._loaded

    def take(self, rows: np.ndarray | slice) -> Deferred:
        """The same columns for a subset of rows (loads the parent's when first used)."""
        return Deferred(self.names, lambda: {name: array[rows] for name, array in self.load().items()})


class Table:
    """An immutable-by-convention set of equal-length 1-D arrays, addressed by column name.

    Columns are also attributes (`kernels.start`). Row order is meaningful: readers sort event tables
    by start time so that visible-window queries can use `np.searchsorted`.
    """

    __slots__ = ("_columns", "_deferred", "_length")

    def __init__(self, columns: Mapping[str, np.ndarray], deferred: Deferred | None = None) -> None:
        lengths = {len(array) for array in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns differ in length: { {k: len(v) for k, v in columns.items()} }")
        self._columns = {name: np.asarray(array) for name, array in columns.items()}
        self._length = lengths.pop() if lengths else 0
        names = tuple(n for n in deferred.names if n not in self._columns) if deferred is not None else ()
        self._deferred = deferred if names else None

    @classmethod
    def empty(cls, dtypes: Mapping[str, np.dtype | type]) -> Table:
        """A table with the given columns and no rows."""
        return cls({name: np.empty(0, dtype=dtype) for name, dtype in dtypes.items()})

    def __len__(self) -> int:
        return self._length

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"table has no column {name!r}") from None

    def __getitem__(self, name: str) -> np.ndarray:
        found = self._columns.get(name)
        if found is not None:
            return found
        if self._deferred is not None and name in self._deferred.names:
            self.load_deferred()
            return self._columns[name]
        raise KeyError(name)

    def load_deferred(self) -> None:
        """Load every deferred column now (a background preload, say)."""
        if self._deferred is not None:
            for name, array in self._deferred.load().items():
                self._columns.setdefault(name, array)
            self._deferred = None

    @property
    def deferred(self) -> tuple[str, ...]:
        """Columns not loaded yet."""
        return tuple(n for n in self._deferred.names if n not in self._columns) if self._deferred else ()

    def __contains__(self, name: object) -> bool:
        return name in self._columns or name in self.deferred

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __repr__(self) -> str:
        return f"Table({self._length} rows: {', '.join(self.columns)})"

    @property
    def columns(self) -> list[str]:
        """Every column's name: those read, then the deferred ones."""
        return [*self._columns, *self.deferred]

    @property
    def arrays(self) -> Mapping[str, np.ndarray]:
        """The columns read so far, by name; deferred ones are not loaded (what a cache writes as it is)."""
        return self._columns

    def take(self, rows: np.ndarray | slice) -> Table:
        """A new table with the selected rows (an index array, a boolean mask or a slice)."""
        deferred = self._deferred.take(rows) if self._deferred is not None else None
        return Table({name: array[rows] for name, array in self._columns.items()}, deferred)

    def with_columns(self, **columns: np.ndarray) -> Table:
        """A new table with columns added or replaced."""
        return Table({**self._columns, **columns}, self._deferred)

    def sorted_by(self, *keys: str) -> Table:
        """Rows sorted (stably) by the given columns, the first key most significant."""
        if self._length == 0 or not keys:
            return self
        order = np.lexsort([self[key] for key in reversed(keys)])
        if np.all(order[1:] > order[:-1]):
            return self
        return self.take(order)
