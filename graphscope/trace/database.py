"""Read-only access to an Nsight Systems SQLite export.

Small tables (strings, metadata, target info) are read through the standard `sqlite3` module with a
lenient text decoder. Event tables are read column by column in rowid chunks through connectorx,
which decodes SQLite rows in Rust straight into Arrow buffers (measured 1.5x SQLite's own scan time,
against 5x for `sqlite3` row tuples; see README). If connectorx cannot decode a chunk (a damaged file
with text in an integer column, say) that chunk is read again through `sqlite3` with SQL casts.

The user's file is never written: both paths open it with SQLite's `mode=ro`.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from graphscope.core.errors import BadInputError, NotAnExportError
from graphscope.core.progress import CancelToken

SQLITE_HEADER = b"SQLite format 3\x00"
DAMAGED = (sqlite3.DatabaseError, UnicodeDecodeError)  # a damaged schema can yield undecodable error text
CHUNK_ROWS = 1 << 20


@dataclass(frozen=True)
class ColumnSpec:
    """One column to read: its name in the file, the dtype to store, the value that replaces NULL."""

    source: str
    dtype: type | np.dtype
    default: int = -1


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _sqlite_uri(path: Path) -> str:
    return "file:" + urllib.parse.quote(str(path)) + "?mode=ro"


class ExportDatabase:
    """An open export: the table/column inventory plus readers for small and large tables."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._check_file()
        try:
            self.conn = sqlite3.connect(_sqlite_uri(self.path.resolve()), uri=True, check_same_thread=False)
            self.conn.text_factory = _lenient_text
            rows = self.conn.execute("SELECT name, type FROM sqlite_master").fetchall()
        except DAMAGED as exc:
            raise NotAnExportError(f"{self.path}: a damaged or truncated SQLite file ({exc})") from None
        self.tables = sorted(name for name, kind in rows if kind == "table")
        self._columns: dict[str, list[str]] = {}
        self._lock = threading.Lock()  # event tables are read from worker threads; sqlite3 calls take turns

    def _check_file(self) -> None:
        path = self.path
        if not path.exists():
            raise BadInputError(f"{path}: no such file")
        if path.is_dir():
            raise BadInputError(f"{path}: is a directory, not an export file")
        try:
            with open(path, "rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise BadInputError(f"{path}: cannot be read ({exc.strerror})") from None
        if not header:
            raise NotAnExportError(f"{path}: the file is empty")
        if header != SQLITE_HEADER:
            raise NotAnExportError(f"{path}: not an SQLite file (export a .nsys-rep with `nsys export --type sqlite`)")
        if path.stat().st_size < 512:
            raise NotAnExportError(f"{path}: the file is truncated ({path.stat().st_size} bytes)")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ExportDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inventory -------------------------------------------------------------------------------

    def has(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> list[str]:
        """Column names of a table (empty if the table is absent)."""
        if table not in self._columns:
            if table not in self.tables:
                return []
            info = self.query(f'PRAGMA table_info("{table}")')
            self._columns[table] = [row[1] for row in info]
        return self._columns[table]

    def resolve_table(self, name: str) -> str | None:
        """The table holding `name`'s data: the exact name, else its highest `_Vn` variant."""
        if name in self.tables:
            return name
        variants = [t for t in self.tables if t.startswith(name + "_V") and t[len(name) + 2 :].isdigit()]
        return max(variants, key=lambda t: int(t[len(name) + 2 :])) if variants else None

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Run a small query through sqlite3; a damaged file becomes a clear error."""
        try:
            with self._lock:
                return self.conn.execute(sql, params).fetchall()
        except DAMAGED as exc:
            raise NotAnExportError(f"{self.path}: the file is damaged ({exc})") from None

    def key_values(self, table: str) -> dict[str, str]:
        """A (name, value) metadata table as a dict; empty if absent."""
        if not self.has(table) or not {"name", "value"} <= set(self.columns(table)):
            return {}
        return {str(k): str(v) for k, v in self.query(f'SELECT name, value FROM "{table}"')}

    def row_count(self, table: str) -> int:
        return self.query(f'SELECT count(*) FROM "{table}"')[0][0]

    # -- bulk reading ----------------------------------------------------------------------------

    def read_columns(
        self, table: str, specs: dict[str, ColumnSpec], cancel: CancelToken | None = None
    ) -> tuple[dict[str, np.ndarray], list[str]]:
        """Read columns of an event table into numpy arrays (in rowid order).

        Columns whose `source` is absent from the table are filled with their default. Values are
        copied once, from the reader's Arrow buffers straight into the final (narrowed) arrays.
        Returns the arrays and warnings about values that had to be coerced.
        """
        present = {*self.columns(table), "rowid"}
        read = {name: spec for name, spec in specs.items() if spec.source in present}
        bounds = self.query(f'SELECT min(rowid), max(rowid) FROM "{table}"')[0]
        warnings: list[str] = []
        if bounds[0] is None or not read:
            n = 0 if bounds[0] is None else self.row_count(table)
            return {name: np.full(n, spec.default, dtype=spec.dtype) for name, spec in specs.items()}, []
        low, high = int(bounds[0]), int(bounds[1])
        capacity = high - low + 1
        out = {name: np.empty(capacity, dtype=spec.dtype) for name, spec in read.items()}
        filled = 0
        for start in range(low, high + 1, CHUNK_ROWS):
            if cancel is not None:
                cancel.check()
            batches, slow = self._read_chunk(table, read, f"rowid >= {start} AND rowid < {start + CHUNK_ROWS}")
            if slow and not warnings:
                warnings.append(f"{table}: some values are not integers where numbers belong; read them as 0")
            for batch in batches:
                rows = len(batch[0])
                for name, values in zip(read, batch):
                    out[name][filled : filled + rows] = values
                filled += rows
        result = {name: array[:filled] if filled == capacity else array[:filled].copy() for name, array in out.items()}
        for name, spec in specs.items():
            if name not in result:
                result[name] = np.full(filled, spec.default, dtype=spec.dtype)
        return result, warnings

    def _read_chunk(
        self, table: str, specs: dict[str, ColumnSpec], condition: str
    ) -> tuple[list[list[np.ndarray]], bool]:
        """Record batches (lists of column arrays) through connectorx; through sqlite3 casts if that
        fails, and then the flag is True."""
        if not _connectorx_available():  # a minimal environment: the slower standard-library path
            return [self._read_chunk_sqlite3(table, specs, condition)], False
        select = ", ".join(f'IFNULL("{s.source}", {s.default}) AS c{i}' for i, s in enumerate(specs.values()))
        try:
            return _read_with_connectorx(self.path, f'SELECT {select} FROM "{table}" WHERE {condition}'), False
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # connectorx raises RuntimeError, TypeError (text), or a Rust panic on damaged pages
            return [self._read_chunk_sqlite3(table, specs, condition)], True

    def _read_chunk_sqlite3(self, table: str, specs: dict[str, ColumnSpec], condition: str) -> list[np.ndarray]:
        select = ", ".join(f'CAST(IFNULL("{s.source}", {s.default}) AS INTEGER)' for s in specs.values())
        try:
            with self._lock:
                cursor = self.conn.execute(f'SELECT {select} FROM "{table}" WHERE {condition}')
                flat = np.fromiter(chain.from_iterable(cursor), dtype=np.int64)
        except DAMAGED as exc:
            raise NotAnExportError(f"{self.path}: the file is damaged ({exc})") from None
        except OverflowError:
            raise NotAnExportError(f"{self.path}: table {table} holds integers too large for 64 bits") from None
        matrix = flat.reshape(-1, len(specs))
        return [matrix[:, i] for i in range(len(specs))]


@functools.cache
def _connectorx_available() -> bool:
    try:
        import connectorx  # noqa: F401
    except ImportError:
        return False
    return True


def _read_with_connectorx(path: Path, sql: str) -> list[list[np.ndarray]]:
    """Run one query through connectorx; its record batches as zero-copy numpy views, per column.

    Raises TypeError when a column did not decode as numbers (connectorx types by the first row).
    """
    import connectorx

    uri = "sqlite://" + urllib.parse.quote(_sqlite_uri(path.resolve()), safe="")
    arrow = connectorx.read_sql(uri, sql, return_type="arrow")
    batches = []
    for batch in arrow.to_batches():
        if batch.num_rows == 0:  # connectorx types an empty result as text
            continue
        columns = [column.to_numpy(zero_copy_only=False) for column in batch.columns]
        if any(c.dtype.kind not in "iuf" for c in columns):
            raise TypeError("a column holds text where numbers belong")
        batches.append(columns)
    return batches
