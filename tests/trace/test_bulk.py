"""Bulk reads by rowid chunks: every row once, in rowid order, however the rowids are spread."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from graphscope.trace import bulk
from graphscope.trace.bulk import MIN_CHUNK_ROWS, plan_chunks, read_tables
from graphscope.trace.database import ColumnSpec, ExportDatabase

SPECS = {
    "start": ColumnSpec("start", np.int64),
    "stream": ColumnSpec("streamId", np.int32),
    "absent": ColumnSpec("noSuchColumn", np.int32, default=7),
}
ROWS = 3 * MIN_CHUNK_ROWS + 123  # several chunks on two threads


@pytest.fixture(autouse=True)
def chunked(monkeypatch):
    """Tables of any size in rowid chunks, as the large ones are read (small ones are read whole)."""
    monkeypatch.setattr(bulk, "WHOLE_ROWS", 0)


def events_file(tmp_path, rows: int = ROWS, delete: str | None = None, rowid_shift: int = 0):
    path = tmp_path / "events.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, start INTEGER, streamId INTEGER)")
        conn.executemany(
            "INSERT INTO events VALUES (?, ?, ?)", ((i + rowid_shift, 10 * i, i % 5) for i in range(1, rows + 1))
        )
        if delete:
            conn.execute(f"DELETE FROM events WHERE {delete}")
    expected = sqlite3.connect(path).execute("SELECT start, streamId FROM events ORDER BY id").fetchall()
    return path, np.array(expected, dtype=np.int64).reshape(-1, 2)


def read(path, threads: int = 2):
    with ExportDatabase(path) as db:
        return read_tables(db, {"events": ("events", SPECS)}, threads=threads)["events"]


def assert_reads(path, expected, threads: int = 2):
    result = read(path, threads)
    assert np.array_equal(result.columns["start"], expected[:, 0])
    assert np.array_equal(result.columns["stream"], expected[:, 1])
    assert (result.columns["absent"] == 7).all() and len(result.columns["absent"]) == len(expected)
    assert result.warnings == []


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_dense_rowids_read_every_row_in_order(tmp_path, threads):
    path, expected = events_file(tmp_path)
    assert_reads(path, expected, threads)


def test_dense_rowids_are_planned_without_counting(tmp_path):
    path, _ = events_file(tmp_path)
    with ExportDatabase(path) as db:
        plan = plan_chunks(db, "events", threads=2)
        counted = plan_chunks(db, "events", threads=2, count_rows=True)
    assert not plan.exact and plan.rows == ROWS and len(plan.chunks) == 2
    assert counted.exact and counted.rows == ROWS and [c.rows for c in counted.chunks] == [c.rows for c in plan.chunks]


def test_a_table_up_to_whole_rows_is_read_in_one_query_without_a_rowid_range(tmp_path, monkeypatch):
    """connectorx counts a query's rows first: SQLite counts a whole table from its pages, a range by
    stepping every row."""
    monkeypatch.setattr(bulk, "WHOLE_ROWS", ROWS)
    path, expected = events_file(tmp_path)
    with ExportDatabase(path) as db:
        plan = plan_chunks(db, "events", threads=2)
    assert [(c.where, c.offset, c.rows) for c in plan.chunks] == [("", 0, ROWS)]
    assert_reads(path, expected)


@pytest.mark.parametrize(
    "delete",
    [
        "id % 7 = 0",  # holes in every chunk
        f"id BETWEEN {MIN_CHUNK_ROWS} AND {2 * MIN_CHUNK_ROWS + 10}",  # a whole chunk and more gone
        f"id > {ROWS - 5000}",  # the tail
        "id < 5000",  # the head
    ],
)
def test_deleted_rows_leave_no_holes(tmp_path, delete):
    path, expected = events_file(tmp_path, delete=delete)
    assert_reads(path, expected, threads=4)  # chunks of MIN_CHUNK_ROWS


@pytest.mark.parametrize("shift", [-(2**40), 2**62 - ROWS - 10])
def test_shifted_rowids(tmp_path, shift):
    path, expected = events_file(tmp_path, rows=MIN_CHUNK_ROWS + 5, rowid_shift=shift)
    assert_reads(path, expected)


def test_rowids_far_apart_are_counted_not_allocated(tmp_path):
    path, _ = events_file(tmp_path, rows=1000)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE events SET id = 4611686018427387904 WHERE id = 1000")
    expected = np.array(sqlite3.connect(path).execute("SELECT start, streamId FROM events ORDER BY id").fetchall())
    with ExportDatabase(path) as db:
        plan = plan_chunks(db, "events", threads=2)
    assert plan.exact and plan.rows == 1000
    assert_reads(path, expected)


def test_a_table_of_absent_columns_has_its_row_count(tmp_path):
    path, _ = events_file(tmp_path, rows=500, delete="id % 2 = 0")
    with ExportDatabase(path) as db:
        result = read_tables(db, {"events": ("events", {"absent": SPECS["absent"]})})["events"]
    assert len(result.columns["absent"]) == 250


def test_an_empty_table(tmp_path):
    path, expected = events_file(tmp_path, rows=10, delete="1")
    assert len(expected) == 0
    assert_reads(path, expected)


NULLABLE = {
    "declared": ColumnSpec("declared", np.int64, default=-1),
    "untyped": ColumnSpec("untyped", np.int64, default=-1),
}


@pytest.mark.parametrize("pattern", ["none", "all", "some", "first"])
@pytest.mark.parametrize("threads", [1, 2])
def test_nulls_become_the_default_in_declared_and_undeclared_columns(tmp_path, pattern, threads):
    """INTEGER columns are read as they are and their NULLs filled from connectorx's mask; untyped ones
    (which connectorx types by their first value) through IFNULL. 64-bit ids survive either way."""
    rows = 2 * MIN_CHUNK_ROWS + 7
    big = 2**62 + 1  # a float round trip would change it

    def value(i: int) -> int | None:
        null = {"none": False, "all": True, "some": i % 3 == 0, "first": i == 1}[pattern]
        return None if null else big + i

    path = tmp_path / "nulls.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, declared INTEGER, untyped)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ((i, value(i), value(i)) for i in range(1, rows + 1)))
    expected = np.array([-1 if value(i) is None else big + i for i in range(1, rows + 1)], dtype=np.int64)
    with ExportDatabase(path) as db:
        result = read_tables(db, {"t": ("t", NULLABLE)}, threads=threads)["t"]
    assert np.array_equal(result.columns["declared"], expected)
    assert np.array_equal(result.columns["untyped"], expected)
    assert result.warnings == []


def test_declared_integer_types_are_recognised_in_any_case(tmp_path):
    path = tmp_path / "types.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (a integer, b BIGINT, c Int, d REAL, e, f TEXT, g INTEGER NOT NULL)")
    with ExportDatabase(path) as db:
        assert [db.declared_integer("T", c) for c in "abcdefg"] == [True, True, True, False, False, False, True]
        assert not db.declared_integer("missing", "a")


def test_reading_uses_the_cores_this_process_may_run_on(monkeypatch):
    """`taskset -c 0,1` or a container's cpuset: two threads, not one per core of the machine."""
    from graphscope.trace import bulk

    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert bulk.read_threads() == 2
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: set(range(128)), raising=False)
    assert bulk.read_threads() == 32


def test_the_reader_uses_connectorx_without_pyarrow_or_its_package_init(tmp_path):
    """connectorx writes NumPy arrays itself: pyarrow is not loaded, nor connectorx's package `__init__`
    (its `importlib.metadata` import was 45 ms of a cold summary)."""
    import subprocess
    import sys

    path, expected = events_file(tmp_path, rows=1000)
    script = (
        "import sys\nfrom graphscope.trace.bulk import read_tables\n"
        "from graphscope.trace.database import ColumnSpec, ExportDatabase\nimport numpy as np\n"
        f"with ExportDatabase({str(path)!r}) as db:\n"
        "    read = read_tables(db, {'e': ('events', {'start': ColumnSpec('start', np.int64)})})['e']\n"
        "names = ('connectorx', 'connectorx.connectorx', 'pyarrow', 'importlib.metadata')\n"
        "print(int(read.columns['start'].sum()), read.warnings, sorted(m for m in names if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split(" ", 1) == [str(int(expected[:, 0].sum())), "[] ['connectorx.connectorx']\n"]
