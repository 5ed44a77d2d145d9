"""Bulk reads of event tables: rowid-range chunks read on every core, straight into numpy columns.

Each table is split into chunks by rowid. Dense rowids (the usual case) are split arithmetically; a
table whose rowids have gaps (rows deleted, or a damaged file) is split at rowids found by one scan,
so arrays are sized by the row count, never by the rowid range. Chunks of all tables go to one pool
of threads (connectorx decodes SQLite rows in Rust and releases the GIL), each writing its own slice
of preallocated arrays, so a column is copied once. A chunk connectorx cannot decode (text where
numbers belong) is read again through `sqlite3` with SQL casts. Values that do not fit the stored
dtype (a 64-bit id in a 32-bit column) become the column's default, with a warning.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import numpy as np

from graphscope.core.errors import NotAnExportError
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.trace.database import ROWID, ColumnSpec, ExportDatabase, quoted, sqlite_uri

CHUNK_ROWS = 1 << 19  # bounds the transient Arrow memory per thread (~50 MB for a dozen columns)
MIN_CHUNK_ROWS = 1 << 16  # below this a chunk costs more in set-up than it saves
MIN_ROW_BYTES = 6  # a table row's least size in an SQLite file: cell pointer, sizes, rowid, header


def read_threads() -> int:
    """Threads for reading: one per core this process may run on (users' machines have 8-64; a
    container or `taskset` may allow fewer than the machine has), at most 32; GRAPHSCOPE_READ_THREADS
    where set (a rank job's worker processes, ranks/pool.py, share the cores between them)."""
    said = os.environ.get("GRAPHSCOPE_READ_THREADS", "")
    if said.isdigit() and int(said) > 0:
        return min(32, int(said))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(32, cores))


@dataclass(frozen=True)
class Chunk:
    where: str  # an SQL condition on the rowid ('' for the whole table)
    offset: int  # first destination row
    rows: int  # rows the condition selects at most


@dataclass(frozen=True)
class Plan:
    """How one table is read: `rows` is its row count when `exact`, else its rowid span (at least the
    count: rowids taken as dense, the usual case, holes closed after the read)."""

    rows: int
    chunks: list[Chunk]
    exact: bool


@dataclass
class TableRead:
    """What was read of one table: columns in rowid order, and what had to be coerced."""

    columns: dict[str, np.ndarray]
    warnings: list[str] = field(default_factory=list)


def plan_chunks(
    db: ExportDatabase, table: str, threads: int, rowids: tuple[int, int] | None = None, count_rows: bool = False
) -> Plan:
    """The chunks of a table, or of its rows with rowid in [low, high) (a window of the file): enough
    to keep every thread busy, none over CHUNK_ROWS.

    A whole table is planned from its first and last rowid alone (two index lookups) unless `count_rows`:
    counting rows costs a scan of every page before the read scans them again.
    """
    alias = db.rowid_alias(table)
    if alias is not None and rowids is None and not count_rows:
        plan = _plan_by_span(db, table, alias, threads)
        if plan is not None:
            return plan
    name = quoted(table)
    bounded = ""
    if rowids is not None and alias is not None:
        bounded = f"{alias} >= {int(rowids[0])} AND {alias} < {int(rowids[1])}"
    where = f" WHERE {bounded}" if bounded else ""
    count = int(db.query(f"SELECT count(*) FROM {name}{where}")[0][0])
    size = _chunk_rows(count, threads)
    if count == 0:
        return Plan(0, [], True)
    if alias is None or count <= size:
        return Plan(count, [Chunk(bounded, 0, count)], True)
    first, last = _rowid_bounds(db, name, alias, where)
    if last - first + 1 == count:  # dense rowids: ranges by arithmetic
        starts = list(range(first, last + 1, size))
    else:  # gaps: every size-th rowid, found in one scan of the rowids
        rows = db.query(
            f"SELECT r FROM (SELECT {alias} AS r, row_number() OVER (ORDER BY {alias}) AS n FROM {name}{where}) "
            f"WHERE (n - 1) % {size} = 0"
        )
        starts = [int(r[0]) for r in rows]
    chunks = []
    for i, low in enumerate(starts):
        high = starts[i + 1] if i + 1 < len(starts) else last + 1
        chunks.append(Chunk(f"{alias} >= {low} AND {alias} < {high}", i * size, min(size, count - i * size)))
    return Plan(count, chunks, True)


def _plan_by_span(db: ExportDatabase, table: str, alias: str, threads: int) -> Plan | None:
    """Chunks by rowid arithmetic over [first, last]; None when the span cannot be a row count of
    this file (rowids far apart: a damaged file, or most rows deleted), which is planned by counting."""
    bounds = _rowid_bounds(db, quoted(table), alias, "")
    if bounds is None:
        return Plan(0, [], True)
    first, last = bounds
    span = last - first + 1
    if span > _most_rows(db) or span < 1:  # far apart, or a damaged b-tree whose first rowid is past its last
        return None
    size = _chunk_rows(span, threads)
    if span <= size:
        return Plan(span, [Chunk("", 0, span)], False)
    chunks = [
        Chunk(f"{alias} >= {low} AND {alias} < {min(low + size, last + 1)}", low - first, min(size, last + 1 - low))
        for low in range(first, last + 1, size)
    ]
    return Plan(span, chunks, False)


def _rowid_bounds(db: ExportDatabase, name: str, alias: str, where: str) -> tuple[int, int] | None:
    first = db.query(f"SELECT {alias} FROM {name}{where} ORDER BY {alias} LIMIT 1")
    last = db.query(f"SELECT {alias} FROM {name}{where} ORDER BY {alias} DESC LIMIT 1")
    return (int(first[0][0]), int(last[0][0])) if first and last else None


def _most_rows(db: ExportDatabase) -> int:
    """More rows than any table of this file can hold: every row takes at least MIN_ROW_BYTES."""
    return max(1, db.path.stat().st_size // MIN_ROW_BYTES)


def _chunk_rows(rows: int, threads: int) -> int:
    return max(MIN_CHUNK_ROWS, min(CHUNK_ROWS, math.ceil(rows / threads))) if rows else 1


def resolve_sources(db: ExportDatabase, table: str, specs: Mapping[str, ColumnSpec]) -> dict[str, str | None]:
    """The file's column for each spec (its first source present, any case), None where absent."""
    resolved: dict[str, str | None] = {}
    for name, spec in specs.items():
        found = None
        for source in spec.sources:
            found = db.rowid_alias(table) if source == ROWID else db.column(table, source)
            if found is not None:
                break
        resolved[name] = found
    return resolved


def read_tables(
    db: ExportDatabase,
    requests: Mapping[str, tuple[str | None, Mapping[str, ColumnSpec]]],
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
    threads: int | None = None,
    rowids: Mapping[str, tuple[int, int]] | None = None,
    finish: Callable[[str, dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
    lean: bool = False,
) -> dict[str, TableRead]:
    """Read the requested columns of several tables at once: {key: (table or None, specs)}.

    Columns absent from a table (or an absent table) are filled with their spec's default. `rowids`
    limits some tables ({key: (low, high)}) to a window of the file. `finish(key, columns)` replaces a
    table's columns once it is read whole, while the next table is read: tables are read one after
    another (every thread on one table's chunks), so that a reader narrowing its columns holds one
    table at full width at a time (at 10M + 10M rows, 0.2 GiB less at the peak).

    `lean` reads through Python's own `sqlite3` on one thread: 4-5x slower than connectorx, but
    without loading connectorx and pyarrow (44 MB resident once imported), for a reader of small
    windows whose memory is the point.
    """
    threads = 1 if lean else threads or read_threads()
    jobs: list[tuple[str, Chunk]] = []
    results: dict[str, TableRead] = {}
    sources: dict[str, dict[str, str | None]] = {}
    plans: dict[str, Plan] = {}
    for key, (table, specs) in requests.items():
        sources[key] = resolve_sources(db, table, specs) if table else {}
        reads_any = any(sources[key].values())
        limit = (rowids or {}).get(key)
        plans[key] = plan_chunks(db, table, threads, limit, count_rows=not reads_any) if table else Plan(0, [], True)
        rows = plans[key].rows
        columns = {}  # chunks fill the columns they read; absent ones hold their default
        for name, spec in specs.items():
            present = sources[key].get(name) is not None
            columns[name] = np.empty(rows, spec.dtype) if present else np.full(rows, spec.default, spec.dtype)
        results[key] = TableRead(columns)
        jobs += [(key, chunk) for chunk in plans[key].chunks if reads_any]

    def width(key: str) -> int:  # bytes a table holds as read
        return plans[key].rows * sum(np.dtype(spec.dtype).itemsize for spec in requests[key][1].values())

    largest_first = sorted(plans, key=lambda key: -width(key))
    jobs.sort(key=lambda job: (largest_first.index(job[0]), -job[1].rows))
    left = {key: sum(1 for k, _ in jobs if k == key) for key in plans}
    whole: set[str] = set()  # tables finished as they completed
    total = sum(chunk.rows for _, chunk in jobs) or 1
    holes: dict[str, list[tuple[int, int]]] = {}

    def run(key: str, chunk: Chunk) -> tuple[str, Chunk, int, list[str]]:
        if cancel is not None:
            cancel.check()
        table, specs = requests[key]
        filled, notes = _read_chunk(db, table, specs, sources[key], chunk, results[key].columns, lean)
        return key, chunk, filled, notes

    done = 0
    if threads == 1 or len(jobs) <= 1:
        finished = (run(key, chunk) for key, chunk in jobs)
    else:
        pool = ThreadPoolExecutor(max_workers=min(threads, len(jobs)))
        futures = [pool.submit(run, key, chunk) for key, chunk in jobs]
        finished = (future.result() for future in as_completed(futures))
    try:
        for key, chunk, filled, notes in finished:
            for note in notes:
                if note not in results[key].warnings:
                    results[key].warnings.append(note)
            if filled < chunk.rows:
                holes.setdefault(key, []).append((chunk.offset + filled, chunk.offset + chunk.rows))
            left[key] -= 1
            if finish is not None and not left[key] and key not in holes:
                results[key].columns = finish(key, results[key].columns)
                whole.add(key)
            done += chunk.rows
            progress(done / total, f"read {done:,} of {total:,} rows")
    finally:
        if threads != 1 and len(jobs) > 1:
            pool.shutdown(wait=True, cancel_futures=True)
    for key, empty in holes.items():  # rowid gaps, or a damaged file that yielded fewer rows than it holds
        keep = np.ones(plans[key].rows, dtype=bool)
        for low, high in empty:
            keep[low:high] = False
        results[key].columns = {name: array[keep] for name, array in results[key].columns.items()}
        table = requests[key][0]
        read = int(keep.sum())
        if read < (plans[key].rows if plans[key].exact else db.query(f"SELECT count(*) FROM {quoted(table)}")[0][0]):
            results[key].warnings.append(f"{table}: fewer rows could be read than the table counts")
    if finish is not None:  # tables not read in chunks (absent, empty), and those with holes
        for key in results.keys() - whole:
            results[key].columns = finish(key, results[key].columns)
    return results


def _read_chunk(
    db: ExportDatabase,
    table: str,
    specs: Mapping[str, ColumnSpec],
    sources: dict[str, str | None],
    chunk: Chunk,
    out: dict[str, np.ndarray],
    lean: bool = False,
) -> tuple[int, list[str]]:
    """Read one chunk into `out` at its offset (with `sqlite3` alone when `lean`); returns rows written
    and warnings."""
    present = [name for name in specs if sources[name] is not None]
    values = [f"IFNULL({quoted(sources[n])}, {specs[n].default})" for n in present]
    where = f" WHERE {chunk.where}" if chunk.where else ""
    notes: list[str] = []
    batches = None
    if not lean and _connectorx_available():
        # Columns declared INTEGER are read as they are (their NULLs are filled from Arrow's validity
        # bitmap, a tenth of the read's time less than IFNULL in SQL); others need IFNULL, because
        # connectorx types an undeclared column by its first value, which may be NULL.
        plain = [db.declared_integer(table, sources[n]) for n in present]
        select = ", ".join(
            f"{quoted(sources[n]) if as_is else v} AS c{i}"
            for i, (n, v, as_is) in enumerate(zip(present, values, plain))
        )
        defaults = [specs[n].default for n in present]
        try:
            batches = _read_with_connectorx(db, f"SELECT {select} FROM {quoted(table)}{where}", defaults)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # connectorx raises RuntimeError, TypeError (text), or a Rust panic on damaged pages
            notes.append(
                f"{table}: some values are not integers where numbers belong (text, or a fraction); "
                "read as the nearest integer"
            )
    if batches is None:
        # Text and real values as the number they write, rounded to an integer: CAST(... AS INTEGER) alone
        # reads '1.819366342e+09' as 1 (its integer prefix) and cuts 12.6 to 12.
        select = ", ".join(
            f"CASE WHEN typeof({v}) = 'integer' THEN {v} ELSE CAST(ROUND(CAST({v} AS REAL)) AS INTEGER) END"
            for v in values
        )
        batches = [db.read_integers(f"SELECT {select} FROM {quoted(table)}{where}", len(present))]
    filled = sum(len(batch[0]) for batch in batches)
    if filled > chunk.rows:
        raise NotAnExportError(f"{db.path}: the file is damaged (table {table} holds more rows than it counts)")
    for column, name in enumerate(present):
        spec, dtype = specs[name], np.dtype(specs[name].dtype)
        target = out[name][chunk.offset : chunk.offset + filled]
        parts = [batch[column] for batch in batches]
        # whole columns, not batch by batch: a few numpy calls a column, so a few GIL handovers (each may
        # wait for another thread, such as the GUI's imports) instead of a few per batch
        if not parts:
            continue
        if all(part.dtype == dtype for part in parts):
            np.concatenate(parts, out=target)  # straight into place
            continue
        fitted, lost = fit(parts[0] if len(parts) == 1 else np.concatenate(parts), dtype, spec.default, spec.unsigned)
        if lost:
            notes.append(f"{table}.{sources[name]}: values that do not fit {dtype.name} were treated as missing")
        target[:] = fitted
    return filled, notes


def fit(values: np.ndarray, dtype: np.dtype, default: int, unsigned: bool = False) -> tuple[np.ndarray, bool]:
    """`values` as `dtype`, with what does not fit (out of range, NaN, infinite) set to `default`.

    With `unsigned`, values up to twice the dtype's maximum are taken as unsigned and wrap (an
    unsigned 32-bit 4294967295 becomes -1), as CUPTI's unsigned ids are meant.
    """
    if values.dtype == dtype or not len(values):
        return values, False
    info = np.iinfo(dtype)
    high_limit = 2 * info.max + 1 if unsigned else info.max
    if values.dtype.kind == "f":  # a REAL column: whole numbers, or times with a fraction (rounded)
        values = np.rint(values)
        bad = ~np.isfinite(values) | (values < info.min) | (values > high_limit)
    else:
        if values.min() >= info.min and values.max() <= info.max:
            return values, False
        bad = (values < info.min) | (values > high_limit)
    lost = bool(bad.any())
    if lost:
        values = np.where(bad, default, values)
    if unsigned:
        values = np.where(values > info.max, values - (high_limit + 1), values)
    return values, lost


@functools.cache
def _connectorx_available() -> bool:
    try:
        import connectorx  # noqa: F401
    except ImportError:
        return False
    return True


def reader_ready() -> bool:
    """Import what the reader needs (connectorx and pyarrow); True if connectorx is there."""
    if not _connectorx_available():
        return False
    import pyarrow  # noqa: F401  (connectorx loads it on its first read)

    return True


def import_in_background() -> None:
    """Start importing connectorx (and pyarrow, ~0.1 s) while SQLite answers the small queries."""
    threading.Thread(target=reader_ready, daemon=True).start()


def _read_with_connectorx(db: ExportDatabase, sql: str, defaults: list[int]) -> list[list[np.ndarray]]:
    """One query through connectorx; its record batches as numpy columns (zero-copy where possible), NULLs
    replaced by the column's default.

    Raises TypeError when a column did not decode as numbers (connectorx types by the first row).
    """
    import connectorx

    uri = "sqlite://" + urllib.parse.quote(sqlite_uri(db.path), safe="")
    arrow = connectorx.read_sql(uri, sql, return_type="arrow")
    batches = []
    for batch in arrow.to_batches():
        if batch.num_rows == 0:  # connectorx types an empty result as text
            continue
        batches.append([_filled(column, default) for column, default in zip(batch.columns, defaults)])
    return batches


_NUMERIC_ARROW_TYPES = {  # Arrow's name of a type -> numpy's
    **{name: np.dtype(name) for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}


def _filled(column, default: int) -> np.ndarray:
    """An Arrow integer or float column as numpy, its NULLs set to `default` by the validity bitmap.

    The values buffer is viewed directly: pyarrow's own conversions import pandas wherever it is
    installed (0.3 s of every read on such a machine) and turn a column with NULLs into floats,
    which loses 64-bit ids.
    """
    dtype = _NUMERIC_ARROW_TYPES.get(str(column.type))
    if dtype is None:
        raise TypeError("a column holds text where numbers belong")
    nulls, rows = column.null_count, len(column)
    if nulls == rows:
        return np.full(rows, default, dtype)
    validity, data = column.buffers()[:2]
    end = column.offset + rows
    values = np.frombuffer(data, dtype, count=end)[column.offset :]
    if not nulls:
        return values
    valid = np.unpackbits(np.frombuffer(validity, np.uint8), count=end, bitorder="little")[column.offset :]
    return np.where(valid.view(bool), values, dtype.type(default))
