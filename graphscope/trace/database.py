"""Read-only access to an Nsight Systems SQLite export: the file check, the table and column inventory,
and small queries. Bulk reading of event tables lives in `trace/bulk.py`.

The user's file is never written: it is opened with SQLite's `mode=ro&immutable=1`, so no `-shm` or
`-wal` file appears beside it, whatever its journal mode. Table and column names are matched without
regard to case, as SQLite itself matches them.
"""

from __future__ import annotations

import math
import os
import stat
import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.errors import BadInputError, NotAnExportError

SQLITE_HEADER = b"SQLite format 3\x00"


def _sqlite3() -> Any:
    """The standard library's sqlite3, imported when an export is opened: a PyTorch-profiler trace's
    summary never needs it (1 MB resident, ~1.3 ms)."""
    import sqlite3

    return sqlite3


def damaged() -> tuple[type[BaseException], ...]:
    """What a damaged file raises: SQLite's errors, or undecodable error text from a damaged schema."""
    return (_sqlite3().DatabaseError, UnicodeDecodeError)


ROWID_ALIASES = ("rowid", "_rowid_", "oid")
ROWID = "<rowid>"
"""A `ColumnSpec.source` that means the table's rowid, under whichever alias no real column shadows."""
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


@dataclass(frozen=True)
class ColumnSpec:
    """One column to read: its name(s) in the file (the first present wins), the dtype to store, and
    the value that replaces NULL (and anything that does not fit the dtype)."""

    source: str | tuple[str, ...]
    dtype: type | np.dtype
    default: int = -1
    unsigned: bool = False  # CUPTI writes some ids as unsigned 32-bit (4294967295 = none): wrap them
    symbol: bool = False  # holds StringIds ids (names), translated when the file's ids are sparse

    @property
    def sources(self) -> tuple[str, ...]:
        return (self.source,) if isinstance(self.source, str) else self.source


def as_int(value: object) -> int | None:
    """An integer from a value SQLite returned, or None when it is not one (NULL, text, a fraction,
    infinity, or beyond 64 bits). Damaged files put text where numbers belong."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() and abs(value) < 2**63 else None
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("+-").isdigit():
            return as_int(int(text))
    return None


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def sqlite_uri(path: Path) -> str:
    """A read-only, immutable URI: SQLite takes no locks and writes no side files."""
    return "file:" + urllib.parse.quote(os.fsencode(path.resolve())) + "?mode=ro&immutable=1"  # bytes: any file name


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


INTEGER_TYPES = ("INTEGER", "INT", "BIGINT")
"""Declared column types that SQLite and connectorx both read as 64-bit integers (Nsight Systems uses INTEGER)."""


def check_regular_file(path: Path) -> os.stat_result:
    """A file graphscope may open: it exists and is a regular file (a FIFO or a device would block)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise BadInputError(f"{path}: is a directory, not an export file")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block or never end
        raise BadInputError(f"{path}: not a regular file (a pipe or a device); save the export to a file first")
    if info.st_size == 0:
        raise NotAnExportError(f"{path}: the file is empty")
    return info


JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _hot_journal(path: Path) -> bool:
    """Is there a rollback journal beside the file that a crashed writer left (SQLite's "hot journal")?
    Its header starts with the journal magic; a committed or rolled-back one is empty or zeroed."""
    journal = Path(str(path) + "-journal")
    try:
        with open(journal, "rb") as handle:
            return handle.read(8) == JOURNAL_MAGIC
    except OSError:
        return False


class ExportDatabase:
    """An open export: the table/column inventory plus small queries."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.notes: list[str] = []
        self._check_file()
        try:
            self.conn = _sqlite3().connect(sqlite_uri(self.path), uri=True, check_same_thread=False)
            self.conn.text_factory = _lenient_text
            rows = self.conn.execute("SELECT name, type FROM sqlite_master").fetchall()
        except damaged() as exc:
            raise NotAnExportError(f"{self.path}: a damaged or truncated SQLite file ({exc})") from None
        self.tables = sorted(str(name) for name, kind in rows if kind == "table" and name is not None)
        self._by_lower = {name.lower(): name for name in reversed(self.tables)}
        self._columns: dict[str, list[str]] = {}
        self._integer_columns: dict[str, set[str]] = {}
        self._aliases: dict[str, str | None] = {}
        self._lock = threading.Lock()  # tables are read from worker threads; sqlite3 calls take turns

    def _check_file(self) -> None:
        path = self.path
        info = check_regular_file(path)
        try:
            with open(path, "rb") as handle:
                header = handle.read(100)
        except OSError as exc:
            raise BadInputError(f"{path}: cannot be read ({exc.strerror})") from None
        if not header:
            raise NotAnExportError(f"{path}: the file is empty")
        if header[: len(SQLITE_HEADER)] != SQLITE_HEADER:
            # imported here: the JSON reader's module imports msgspec, which an export never needs
            from graphscope.trace.kineto_json import foreign_kind

            kind = foreign_kind(header)  # a picture renamed .json is not "a .nsys-rep to export"
            if kind is not None:
                raise NotAnExportError(
                    f"{path}: {kind}, not a trace (an Nsight Systems export or a PyTorch-profiler trace)"
                )
            raise NotAnExportError(f"{path}: not an SQLite file (export a .nsys-rep with `nsys export --type sqlite`)")
        if info.st_size < 512:
            raise NotAnExportError(f"{path}: the file is truncated ({info.st_size} bytes)")
        if _hot_journal(path):
            raise NotAnExportError(
                f"{path}: the program writing it stopped mid-transaction ({path.name}-journal holds the pages it "
                "was changing), so the file holds uncommitted data; let sqlite3 roll it back once "
                f"(sqlite3 {path.name} 'PRAGMA quick_check') or export it again"
            )
        wal = Path(str(path) + "-wal")
        if header[18] == 2 and wal.is_file() and wal.stat().st_size > 0:
            self.notes.append(
                f"{wal.name} holds changes not yet merged into the export; they were not read "
                "(open the file once with sqlite3 to merge them)"
            )

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ExportDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inventory -------------------------------------------------------------------------------

    def has(self, table: str) -> bool:
        return table.lower() in self._by_lower

    def columns(self, table: str) -> list[str]:
        """Column names of a table as the file spells them (empty if the table is absent)."""
        real = self._by_lower.get(table.lower())
        if real is None:
            return []
        if real not in self._columns:
            info = self.query(f"PRAGMA table_info({quoted(real)})")
            self._columns[real] = [str(row[1]) for row in info if row[1] is not None]
            self._integer_columns[real] = {
                str(row[1]) for row in info if row[1] is not None and str(row[2] or "").upper() in INTEGER_TYPES
            }
        return self._columns[real]

    def declared_integer(self, table: str, column: str) -> bool:
        """Whether the file declares `column` (as the file spells it) INTEGER, INT or BIGINT: such a column
        reads as 64-bit integers whatever its first value, NULL included."""
        real = self._by_lower.get(table.lower())
        if real is None:
            return False
        self.columns(real)
        return column in self._integer_columns[real]

    def column(self, table: str, name: str) -> str | None:
        """The file's spelling of column `name` (any case), or None if the table lacks it."""
        wanted = name.lower()
        return next((c for c in self.columns(table) if c.lower() == wanted), None)

    def has_columns(self, table: str, *names: str) -> bool:
        return all(self.column(table, n) is not None for n in names)

    def resolve_table(self, name: str) -> str | None:
        """The table holding `name`'s data: the exact name (any case), else its highest `_Vn` variant."""
        found = self._by_lower.get(name.lower())
        if found is not None:
            return found
        prefix = name.lower() + "_v"
        variants = [t for t in self.tables if t.lower().startswith(prefix) and t[len(prefix) :].isdigit()]
        return max(variants, key=lambda t: int(t[len(prefix) :])) if variants else None

    def rowid_alias(self, table: str) -> str | None:
        """The name that reaches the rowid (`rowid`, unless a real column took that name), or None for a
        WITHOUT ROWID table."""
        real = self._by_lower.get(table.lower(), table)
        if real not in self._aliases:
            taken = {c.lower() for c in self.columns(real)}
            alias = next((a for a in ROWID_ALIASES if a not in taken), None)
            if alias is not None:
                try:
                    with self._lock:
                        self.conn.execute(f"SELECT {alias} FROM {quoted(real)} LIMIT 1").fetchall()
                except _sqlite3().OperationalError:
                    alias = None  # WITHOUT ROWID
                except damaged() as exc:
                    raise NotAnExportError(f"{self.path}: the file is damaged ({exc})") from None
            self._aliases[real] = alias
        return self._aliases[real]

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Run a small query through sqlite3; a damaged file becomes a clear error."""
        try:
            with self._lock:
                return self.conn.execute(sql, params).fetchall()
        except damaged() as exc:
            raise NotAnExportError(f"{self.path}: the file is damaged ({exc})") from None
        except OverflowError:
            raise NotAnExportError(f"{self.path}: the file holds integers too large for 64 bits") from None

    def read_integers(self, sql: str, width: int) -> list[np.ndarray]:
        """The columns of a query whose `width` values per row are all integers (the slow, sure path)."""
        try:
            with self._lock:
                flat = np.fromiter(chain.from_iterable(self.conn.execute(sql)), dtype=np.int64)
        except damaged() as exc:
            raise NotAnExportError(f"{self.path}: the file is damaged ({exc})") from None
        except (OverflowError, TypeError, ValueError):
            raise NotAnExportError(f"{self.path}: the file holds values that are not 64-bit integers") from None
        matrix = flat.reshape(-1, width)
        return [matrix[:, i] for i in range(width)]

    def select(self, table: str, wanted: Sequence[str], where: str = "") -> list[tuple]:
        """Rows of the `wanted` columns (any case; NULL for absent ones) of a small table."""
        real = self.resolve_table(table)
        if real is None:
            return []
        columns = ", ".join(quoted(c) if (c := self.column(real, name)) else "NULL" for name in wanted)
        return self.query(f"SELECT {columns} FROM {quoted(real)}" + (f" WHERE {where}" if where else ""))

    def key_values(self, table: str) -> dict[str, str]:
        """A (name, value) metadata table as a dict; empty if absent."""
        if not self.has_columns(table, "name", "value"):
            return {}
        return {str(k): str(v) for k, v in self.select(table, ("name", "value")) if k is not None}

    def row_count(self, table: str) -> int:
        real = self.resolve_table(table)
        return int(self.query(f"SELECT count(*) FROM {quoted(real)}")[0][0]) if real else 0
