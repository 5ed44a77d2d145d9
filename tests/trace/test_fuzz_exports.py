"""Mutated copies of real exports (tests/mutations.py) through every path that reads a file.

Every case must end in exit 0 (with warnings where the file was damaged) or exit 2 with one line on
stderr; never a traceback, a hang or a write beside the user's file. benchmarks/fuzz_exports.py runs
the same families thousands of times.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphscope.cli import main
from graphscope.core.errors import BadInputError
from graphscope.trace import load_trace
from tests import mutations
from tests.conftest import DATA, EXPORTS, FORKJOIN, H200_NODE, TORCH_MLP

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"


def mutated(tmp_path: Path, mutation: mutations.Mutation, source: Path = FORKJOIN) -> Path:
    target = tmp_path / f"mutated-{source.name}"
    shutil.copy(source, target)
    conn = sqlite3.connect(target)
    try:
        mutation.apply(conn)
        conn.commit()
    finally:
        conn.close()
    for side in (Path(f"{target}-wal"), Path(f"{target}-shm")):
        side.unlink(missing_ok=True)
    return target


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def assert_clean(path: Path) -> None:
    """summary --json and dag --json end in 0, or 2 with one line; the GUI's loader raises only our errors."""
    for command in (("summary", "--json"), ("dag", "--json")):
        code, out, err = run_cli(*command, str(path))
        assert code in (0, 2), (command, code, err)
        if code == 2:
            assert err.startswith("graphscope: error: ") and err.count("\n") == 1, err
        elif command[0] == "summary":
            assert json.loads(out)["file"] == str(path)
    from graphscope.view.document import open_document

    with contextlib.suppress(BadInputError):
        open_document(path)


def _families(conn: sqlite3.Connection) -> list[mutations.Mutation]:
    """One mutation per family and table kind: the cases every CI run checks."""
    picked, seen = [], set()
    for mutation in mutations.all_mutations(conn):
        key = (mutation.family, mutation.detail.split(".")[0].split(" ")[0])
        if key not in seen:
            seen.add(key)
            picked.append(mutation)
    return picked


with sqlite3.connect(f"file:{FORKJOIN}?mode=ro", uri=True) as _conn:
    FAMILY_CASES = _families(_conn)
    ALL_CASES = mutations.all_mutations(_conn)


@pytest.mark.parametrize("mutation", FAMILY_CASES, ids=str)
def test_every_family_loads_or_fails_cleanly(tmp_path, mutation):
    assert_clean(mutated(tmp_path, mutation))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, len(ALL_CASES) - 1), source=st.sampled_from([FORKJOIN, H200_NODE, TORCH_MLP]))
def test_any_mutation_loads_or_fails_cleanly(tmp_path_factory, index, source):
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as conn:
        cases = mutations.all_mutations(conn)
    mutation = cases[index % len(cases)]
    folder = tmp_path_factory.mktemp("fuzz")
    try:
        path = mutated(folder, mutation, source)
    except sqlite3.Error:
        return  # SQLite refused the mutation itself (a constraint): nothing to test
    assert_clean(path)


# -- the families the hardening issue reported, one by one -------------------------------------------


@pytest.mark.parametrize("rowid", [2**40, 2**62, 2**63 - 1, -5])
def test_rowid_gaps_load_every_row(tmp_path, rowid):
    path = mutated(tmp_path, mutations.set_rowid(KERNEL, rowid))
    assert len(load_trace(path).kernels) == len(load_trace(FORKJOIN).kernels)


def test_a_table_with_many_gaps_reads_in_order(tmp_path):
    path = mutated(tmp_path, mutations.delete_rows(KERNEL, 2), H200_NODE)
    trace, whole = load_trace(path), load_trace(H200_NODE)
    assert 0 < len(trace.kernels) < len(whole.kernels)
    assert set(trace.kernels.start.tolist()) <= set(whole.kernels.start.tolist())
    assert (np.diff(trace.kernels.start) >= 0).all()


@pytest.mark.parametrize("value", ["0x10", "12abc", "1e999"])
def test_text_in_the_process_table(tmp_path, value):
    path = mutated(tmp_path, mutations.set_value("PROCESSES", "globalPid", value, rows="all"))
    trace = load_trace(path)
    assert len(trace.kernels) == 52 and len(trace.processes) == 1


def test_text_string_id_is_ignored_with_a_warning(tmp_path):
    path = mutated(tmp_path, mutations.set_value("StringIds", "id", "x"))
    trace = load_trace(path)
    assert any("StringIds" in w for w in trace.info.warnings)


def test_null_stream_id_in_stream_metadata(tmp_path):
    path = mutated(tmp_path, mutations.set_value("TARGET_INFO_CUDA_STREAM", "streamId", None))
    trace = load_trace(path)
    assert len(trace.streams) == len(load_trace(FORKJOIN).streams) - 1


@pytest.mark.parametrize("name", ["rowid", "_rowid_", "ROWID"])
def test_a_column_named_rowid_does_not_hide_the_rows(tmp_path, name):
    path = mutated(tmp_path, mutations.add_column(KERNEL, name, "not a number"))
    kernels = load_trace(path, columns="all").kernels
    reference = load_trace(FORKJOIN, columns="all").kernels
    assert np.array_equal(kernels.start, reference.start) and np.array_equal(kernels.grid_x, reference.grid_x)


def test_without_rowid_tables_read_in_full(tmp_path):
    path = mutated(tmp_path, mutations.without_rowid(KERNEL))
    assert np.array_equal(load_trace(path).kernels.start, load_trace(FORKJOIN).kernels.start)


def test_table_and_column_names_match_in_any_case(tmp_path):
    path = mutated(tmp_path, mutations.recase(KERNEL))
    trace = load_trace(path)
    assert len(trace.kernels) == 52 and not trace.info.warnings
    assert np.array_equal(trace.kernels.grid_x, load_trace(FORKJOIN).kernels.grid_x)


def test_a_missing_optional_column_is_not_damage(tmp_path):
    path = mutated(tmp_path, mutations.drop_column(KERNEL, "registersPerThread"))
    trace = load_trace(path)
    assert (trace.kernels.registers == 0).all() and not trace.info.warnings


def test_string_ids_beyond_32_bits_are_missing_not_other_names(tmp_path):
    path = mutated(tmp_path, mutations.set_value(KERNEL, "shortName", 2**32 + 3))
    trace = load_trace(path)
    assert trace.kernels.short_name.min() == -1  # not 3, the string 2**32 + 3 wraps to
    assert any("do not fit int32" in w for w in trace.info.warnings)


def test_unsigned_stream_ids_wrap_as_cupti_means_them(export_copy):
    path, conn = export_copy()
    conn.execute(f"UPDATE {KERNEL} SET streamId = 4294967295 WHERE rowid = 1")
    conn.commit()
    trace = load_trace(path)
    assert -1 in trace.kernels.stream and not trace.info.warnings


@pytest.mark.parametrize("shift", [1, 1 << 20, -(1 << 40)])
def test_string_ids_that_point_nowhere(tmp_path, shift):
    assert_clean(mutated(tmp_path, mutations.shift_string_ids(shift)))


def test_empty_string_table(tmp_path):
    path = mutated(tmp_path, mutations.empty_table("StringIds"))
    code, out, _ = run_cli("dag", "--json", str(path))
    assert code == 0 and "[unknown #" in out


def test_wal_export_leaves_nothing_beside_it(tmp_path):
    path = mutated(tmp_path, mutations.wal_mode())
    path.chmod(0o444)
    load_trace(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_huge_names_do_not_flood_the_dag_document(tmp_path):
    path = mutated(tmp_path, mutations.huge_names(1 << 20), H200_NODE)
    code, out, _ = run_cli("dag", "--json", str(path))
    assert code == 0 and len(out) < 10 * (1 << 20)  # 1000 nodes of 1 MiB names would be a gigabyte
    assert "more characters]" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "x.sqlite"
    os.mkfifo(fifo)
    result: dict[str, object] = {}
    worker = threading.Thread(target=lambda: result.update(answer=run_cli("summary", str(fifo))), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "blocked on a FIFO"
    code, _, err = result["answer"]
    assert code == 2 and "not a regular file" in err


@pytest.mark.parametrize("source", EXPORTS[:4], ids=lambda p: p.stem[:24])
def test_summary_of_real_exports_is_unchanged_by_deferred_columns(source):
    """Reading every column up front and reading on demand give the same tables."""
    lazy, eager = load_trace(source), load_trace(source, columns="all")
    for key in ("api", "kernels", "memcpy", "memset", "nvtx"):
        a, b = getattr(lazy, key), getattr(eager, key)
        for column in b.columns:
            assert np.array_equal(a[column], b[column]), (key, column)


@pytest.mark.parametrize("source", [H200_NODE, FORKJOIN, TORCH_MLP], ids=lambda p: p.stem)
def test_sparse_string_ids_read_exactly_like_dense_ones(tmp_path, source, capsys):
    """A trimmed export keeps a few strings under ids in the millions: every name must survive."""
    renumbered = mutated(tmp_path, mutations.sparse_string_ids(27_000), source)
    answers = []
    for path in (source, renumbered):
        assert main(["summary", "--json", str(path)]) == 0
        data = json.loads(capsys.readouterr().out)
        data.pop("file")
        answers.append(data)
    assert answers[0] == answers[1] and answers[1]["launch"]["verdict"] != "no verdict"
    trace = load_trace(renumbered)
    assert trace.symbols.file_ids is not None and len(trace.symbols) < 10_000
    assert not [n for n in trace.kernels.name if n < 0]  # the deferred demangled names translate too


def test_string_ids_all_beyond_the_table_load_with_a_warning(tmp_path, capsys):
    shifted = mutated(tmp_path, mutations.shift_string_ids(1 << 21))
    assert main(["summary", "--json", str(shifted)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any("StringIds lacks" in w for w in data["warnings"])


@pytest.mark.parametrize("declared, expression", mutations.TYPED, ids=lambda v: v or "untyped")
def test_typed_timestamps_read_as_the_numbers_they_write(tmp_path, declared, expression):
    typed = mutated(tmp_path, mutations.typed_column(KERNEL, "start", declared, expression))
    original, read = load_trace(FORKJOIN), load_trace(typed)
    offset = 0.25 if "+ 0.25" in expression else 0.0  # a fraction rounds to the nearest nanosecond
    assert np.array_equal(read.kernels.start, np.rint(original.kernels.start + offset).astype(np.int64))
    assert read.kernels.start.min() > 1_000_000  # not the integer prefix of '1.8e+09'


def test_a_hot_rollback_journal_is_refused_not_read(tmp_path):
    """A writer killed mid-transaction leaves its uncommitted pages in the file and the originals in
    -journal; graphscope opens files immutably, so it must not read the half-written state."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "j.sqlite"
    shutil.copy(H200_NODE, path)
    script = (
        "import sqlite3, os, signal, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('PRAGMA cache_size=1')\n"
        f"c.execute('BEGIN'); c.execute('UPDATE {KERNEL} SET start = start + 1')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True)
    assert killed.returncode == -signal.SIGKILL and (tmp_path / "j.sqlite-journal").exists()
    with pytest.raises(BadInputError, match="stopped mid-transaction"):
        load_trace(path)
    assert main(["summary", str(path)]) == 2


def test_a_btree_whose_first_rowid_is_past_its_last_is_refused_in_one_line(tmp_path, capsys):
    """Found by benchmarks/fuzz_exports.py: 49 flipped bytes in the DLProf export made the rowid span
    negative (ValueError: negative dimensions)."""
    import random

    path = tmp_path / "flipped.sqlite"
    data = bytearray((DATA / "MohanadOdema__DLProf__nsys_profile.sqlite").read_bytes())
    picker = random.Random("49 random bytes (seed 515676112)")
    for _ in range(49):
        data[picker.randrange(100, len(data))] = picker.randrange(256)
    path.write_bytes(bytes(data))
    assert main(["summary", "--json", str(path)]) in (0, 2)
    err = capsys.readouterr().err
    assert err == "" or (err.startswith("graphscope: error:") and err.count("\n") == 1)
