"""Bad input gets a clear GraphscopeError (or a result plus warnings), never a traceback, hang or write."""

from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphscope.core.errors import BadInputError, GraphscopeError, NotAnExportError, UnsupportedSchemaError
from graphscope.trace import load_trace
from tests.conftest import FORKJOIN

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"


def test_missing_path(tmp_path):
    with pytest.raises(BadInputError, match="no such file"):
        load_trace(tmp_path / "nope.sqlite")


def test_directory(tmp_path):
    with pytest.raises(BadInputError, match="is a directory"):
        load_trace(tmp_path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    with pytest.raises(NotAnExportError, match="empty"):
        load_trace(path)


def test_not_sqlite(tmp_path):
    path = tmp_path / "report.sqlite"
    path.write_text("this is a CSV,not,an,export\n" * 50)
    with pytest.raises(NotAnExportError, match="not an SQLite file"):
        load_trace(path)


@pytest.mark.parametrize("keep", [0.5, 0.05])
def test_truncated_export(tmp_path, keep):
    data = FORKJOIN.read_bytes()
    path = tmp_path / "truncated.sqlite"
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(NotAnExportError, match="damaged or truncated"):
        load_trace(path)


def test_sqlite_that_is_not_an_export(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
        conn.execute("INSERT INTO people VALUES ('ada')")
    with pytest.raises(NotAnExportError, match="not an Nsight Systems export"):
        load_trace(path)


def test_export_missing_a_required_column(export_copy):
    path, conn = export_copy()
    conn.execute(f'ALTER TABLE {KERNEL} DROP COLUMN "start"')
    conn.commit()
    with pytest.raises(UnsupportedSchemaError, match=f"{KERNEL} lacks required column.*start"):
        load_trace(path)


def test_kernel_table_without_any_name_column(export_copy):
    path, conn = export_copy()
    conn.execute(f"ALTER TABLE {KERNEL} DROP COLUMN shortName")
    conn.execute(f"ALTER TABLE {KERNEL} DROP COLUMN demangledName")
    conn.commit()
    with pytest.raises(UnsupportedSchemaError, match="shortName/demangledName"):
        load_trace(path)


def test_dangling_string_ids_load_with_a_warning(export_copy):
    path, conn = export_copy()
    conn.execute(f"UPDATE {KERNEL} SET shortName = 987654 WHERE rowid = 1")
    conn.commit()
    trace = load_trace(path)
    assert any("StringIds lacks" in w for w in trace.info.warnings)
    assert "[unknown #987654]" in {trace.symbols.name(int(i)) for i in trace.kernels.short_name}


def test_negative_durations_load_as_zero_with_a_warning(export_copy):
    path, conn = export_copy()
    conn.execute(f'UPDATE {KERNEL} SET "end" = start - 500 WHERE rowid IN (2, 3)')
    conn.commit()
    trace = load_trace(path)
    assert any("2 rows end before they start" in w for w in trace.info.warnings)
    assert (trace.kernels.end >= trace.kernels.start).all()


def test_text_where_integers_belong(export_copy):
    path, conn = export_copy()
    conn.execute(f"UPDATE {KERNEL} SET gridX = 'lots' WHERE rowid = 4")
    conn.commit()
    trace = load_trace(path)
    assert len(trace.kernels) == 52
    assert "grid_x" in trace.kernels.deferred  # read when first used, and warned about then
    assert sorted(set(trace.kernels.grid_x.tolist()))[0] == 0  # 'lots' casts to 0
    assert any("not integers" in w for w in trace.info.warnings)


def test_extra_tables_and_indexes_from_other_tools_are_ignored(export_copy):
    path, conn = export_copy()
    conn.execute(f"CREATE INDEX _nsysai_kernel_start ON {KERNEL}(start)")
    conn.execute(f"ALTER TABLE {KERNEL} ADD COLUMN name TEXT")
    conn.commit()
    assert len(load_trace(path).kernels) == 52


def test_reader_never_writes(export_copy):
    path, conn = export_copy()
    conn.close()
    path.chmod(0o444)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    mtime = path.stat().st_mtime_ns
    load_trace(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert path.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(100, 729_000), st.integers(0, 255)), min_size=1, max_size=40))
def test_fuzzed_exports_load_or_fail_cleanly(tmp_path, flips):
    data = bytearray(FORKJOIN.read_bytes())
    for position, value in flips:
        data[position % len(data)] = value
    path = tmp_path / "fuzzed.sqlite"
    path.write_bytes(bytes(data))
    try:
        trace = load_trace(path)
    except GraphscopeError as exc:
        assert "\n" not in str(exc)
    else:  # whatever loaded keeps the table invariants analysis relies on
        for table in (trace.api, trace.kernels, trace.memcpy, trace.memset):
            assert (np.diff(table.start) >= 0).all() and (table.end >= table.start).all()
