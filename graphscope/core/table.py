"""Columnar event tables: one numpy array per column, all of one length. Never a Python object per row."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

NULL = -1
"""Integer sentinel for a missing value (NULL in the export, no partner in a join)."""


class Table:
    """An immutable-by-convention set of equal-length 1-D arrays, addressed by column name.

    Columns are also attributes (`kernels.start`). Row order is meaningful: readers sort event tables
    by start time so that visible-window queries can use `np.searchsorted`.
    """

    __slots__ = ("_columns", "_length")

    def __init__(self, columns: Mapping[str, np.ndarray]) -> None:
        lengths = {len(array) for array in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns differ in length: { {k: len(v) for k, v in columns.items()} }")
        self._columns = {name: np.asarray(array) for name, array in columns.items()}
        self._length = lengths.pop() if lengths else 0

    @classmethod
    def empty(cls, dtypes: Mapping[str, np.dtype | type]) -> Table:
        """A table with the given columns and no rows."""
        return cls({name: np.empty(0, dtype=dtype) for name, dtype in dtypes.items()})

    def __len__(self) -> int:
        return self._length

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self._columns[name]
        except KeyError:
            raise AttributeError(f"table has no column {name!r}") from None

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self._columns

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __repr__(self) -> str:
        return f"Table({self._length} rows: {', '.join(self._columns)})"

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def take(self, rows: np.ndarray | slice) -> Table:
        """A new table with the selected rows (an index array, a boolean mask or a slice)."""
        return Table({name: array[rows] for name, array in self._columns.items()})

    def with_columns(self, **columns: np.ndarray) -> Table:
        """A new table with columns added or replaced."""
        return Table({**self._columns, **columns})

    def sorted_by(self, *keys: str) -> Table:
        """Rows sorted (stably) by the given columns, the first key most significant."""
        if self._length == 0 or not keys:
            return self
        order = np.lexsort([self._columns[key] for key in reversed(keys)])
        if np.all(order[1:] > order[:-1]):
            return self
        return self.take(order)
