"""The Perfetto export of an export read a window of time at a time (export/perfetto_stream.py): the same
events as the export of the trace held whole (export/perfetto.py), whatever the windows cut through."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from graphscope.analysis.summary import analyze
from graphscope.cli import main
from graphscope.core.errors import NotAnExportError
from graphscope.export import perfetto_stream
from graphscope.export.perfetto import write_perfetto
from graphscope.trace import load_trace
from tests import mutations
from tests.conftest import DATA, FORKJOIN, H200_GRAPH, H200_NODE, TORCH_MLP

KERNELS, RUNTIME = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"


def events(path: Path) -> list[dict]:
    return json.loads(path.read_text())["traceEvents"]


def whole_export(source: Path, target: Path) -> list[dict]:
    trace = load_trace(source)
    write_perfetto(trace, analyze(trace), target)
    return events(target)


def without_ids(found: list[dict]) -> Counter:
    """Every event but its flow id (each writer names flows its own way)."""
    return Counter(json.dumps({k: v for k, v in e.items() if k != "id"}, sort_keys=True) for e in found)


def flows(found: list[dict]) -> Counter:
    """Each flow as its start and end (phase, track, time), whatever its id."""
    by_id = defaultdict(list)
    for e in found:
        if e["ph"] in ("s", "f"):
            by_id[e["id"]].append((e["ph"], e["pid"], e["tid"], e["ts"]))
    return Counter(tuple(sorted(pair)) for pair in by_id.values())


def in_time_order(found: list[dict]) -> bool:
    last: dict[tuple, float] = {}
    for e in found:
        if e["ph"] != "M":
            if e["ts"] < last.get((e["pid"], e["tid"]), float("-inf")):
                return False
            last[(e["pid"], e["tid"])] = e["ts"]
    return True


def same_as_whole(tmp_path: Path, path: Path) -> Counter:
    """The streamed export's events and flows are the whole trace's; its flows."""
    whole = whole_export(path, tmp_path / "whole.json")
    perfetto_stream.export_perfetto(path, tmp_path / "streamed.json")
    streamed = events(tmp_path / "streamed.json")
    assert without_ids(streamed) == without_ids(whole)
    assert flows(streamed) == flows(whole)
    assert all(len(pair) == 2 for pair in flows(streamed))
    return flows(streamed)


@pytest.mark.parametrize(
    "source",
    [H200_NODE, H200_GRAPH, FORKJOIN, TORCH_MLP, DATA / "PolPuigPuy__OpenACC_Project_PolPuig__report2.sqlite"],
    ids=lambda p: p.stem[:24],
)
@pytest.mark.parametrize("window", [700, 100_000])
def test_streamed_export_writes_the_events_of_the_whole_trace(tmp_path, monkeypatch, source, window):
    """700 events a window cut the node traces' 1000-node graph launches, and their launches' flows, in two."""
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", window)
    whole = whole_export(source, tmp_path / "whole.json")
    counts = perfetto_stream.export_perfetto(source, tmp_path / "streamed.json")
    streamed = events(tmp_path / "streamed.json")
    assert without_ids(streamed) == without_ids(whole)
    assert flows(streamed) == flows(whole)
    assert all(len(pair) == 2 for pair in flows(streamed))
    assert in_time_order(streamed)
    assert counts["slices"] == sum(e["ph"] == "X" for e in streamed)
    assert counts["flows"] == sum(e["ph"] == "f" for e in streamed)


def test_rows_out_of_start_order_are_each_written_once(tmp_path, monkeypatch, export_copy):
    """A file whose rows were written back in random order (rowids no longer follow time): windows found by
    binary search over its rowids still hold every row once."""
    path, conn = export_copy(H200_NODE)
    for table in (KERNELS, RUNTIME):
        conn.execute(f'CREATE TABLE "shuffled" AS SELECT * FROM "{table}" ORDER BY random()')
        conn.execute(f'DELETE FROM "{table}"')
        conn.execute(f'INSERT INTO "{table}" SELECT * FROM "shuffled"')
        conn.execute('DROP TABLE "shuffled"')
    conn.commit()
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", 2000)
    same_as_whole(tmp_path, path)


WORK_AND_CALLS = {KERNELS: "globalPid", "CUPTI_ACTIVITY_KIND_MEMCPY": "globalPid", "CUPTI_ACTIVITY_KIND_MEMSET":
                  "globalPid", RUNTIME: "globalTid"}  # fmt: skip


def test_a_second_process_with_the_same_correlation_ids_gets_flows_of_its_own(tmp_path, monkeypatch, export_copy):
    """Two processes count their correlation ids from 1 alike: a flow joins a call to work of its own process."""
    path, conn = export_copy(FORKJOIN)
    for table, owner in WORK_AND_CALLS.items():
        conn.execute(f'CREATE TABLE "twin" AS SELECT * FROM "{table}"')
        conn.execute(f'UPDATE "twin" SET "{owner}" = "{owner}" + (1 << 24), start = start + 3000, "end" = "end" + 3000')
        conn.execute(f'INSERT INTO "{table}" SELECT * FROM "twin" ORDER BY start')
        conn.execute('DROP TABLE "twin"')
    conn.commit()
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", 100)
    twins = same_as_whole(tmp_path, path)
    assert len({e["pid"] for e in events(tmp_path / "streamed.json") if e.get("cat") == "cuda_api"}) == 2
    assert len(twins) == 2 * len(same_as_whole(tmp_path, FORKJOIN)) > 20


def test_correlation_ids_far_apart_are_kept_by_rank(tmp_path, monkeypatch, export_copy):
    """Ids no byte-per-id table could hold (a renumbered file): the flows are the same."""
    path, conn = export_copy(FORKJOIN)
    for table in WORK_AND_CALLS:
        conn.execute(f'UPDATE "{table}" SET correlationId = correlationId * 1000003 WHERE correlationId IS NOT NULL')
    conn.commit()
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", 100)
    assert len(same_as_whole(tmp_path, path)) == len(same_as_whole(tmp_path, FORKJOIN)) > 20


@pytest.mark.parametrize(
    "mutation",
    [
        mutations.delete_rows(KERNELS, 3),
        mutations.delete_rows(RUNTIME, 5),
        mutations.set_rowid(KERNELS, 10**9),
        mutations.sparse_string_ids(1009),
        mutations.shift_string_ids(7),
        mutations.Mutation(
            "bad value",
            "the last kernel's correlationId 2**40 (its process's ids, dense until then, kept by rank after)",
            lambda conn: conn.execute(
                f'UPDATE "{KERNELS}" SET correlationId = 1 << 40 WHERE rowid = (SELECT max(rowid) FROM "{KERNELS}")'
            ),
        ),
    ],
    ids=str,
)
def test_trimmed_and_renumbered_exports_stream_as_they_read_whole(tmp_path, monkeypatch, export_copy, mutation):
    path, conn = export_copy(H200_NODE)
    mutation.apply(conn)
    conn.commit()
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", 1500)
    same_as_whole(tmp_path, path)


def test_a_table_without_rowids_is_exported_whole(tmp_path, export_copy):
    path, conn = export_copy(FORKJOIN)
    mutations.without_rowid(KERNELS).apply(conn)
    conn.commit()
    assert perfetto_stream.export_perfetto(path, tmp_path / "none.json") is None
    assert not (tmp_path / "none.json").exists()
    assert main(["export", "--no-cache", str(path), "-o", str(tmp_path / "t.json")]) == 0
    assert without_ids(events(tmp_path / "t.json")) == without_ids(whole_export(FORKJOIN, tmp_path / "w.json"))


def test_a_cached_export_is_exported_from_its_cache(tmp_path, own_cache, monkeypatch):
    """Its columns are mapped already: read whole from the cache, never from the file again."""
    from graphscope.trace import cache

    load_trace(FORKJOIN)
    cache.wait_for_writers()
    assert cache.open_entry(FORKJOIN) is not None
    monkeypatch.setattr(perfetto_stream, "export_perfetto", lambda *a: pytest.fail("read the file by windows"))
    assert main(["export", str(FORKJOIN), "-o", str(tmp_path / "t.json")]) == 0
    assert without_ids(events(tmp_path / "t.json")) == without_ids(whole_export(FORKJOIN, tmp_path / "w.json"))


def test_streamed_export_loads_neither_connectorx_nor_pyarrow(tmp_path):
    """What keeps its memory under a plain writer's: 44 MB of libraries it has no use for at a window's size."""
    script = (
        "import sys\nfrom graphscope.cli import main\n"
        f"assert main(['export', '--no-cache', {str(H200_NODE)!r}, '-o', {str(tmp_path / 't.json')!r}]) == 0\n"
        "print(sorted(m for m in ('connectorx', 'connectorx.connectorx', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_an_export_that_fails_halfway_leaves_nothing_behind(tmp_path, monkeypatch):
    """A file damaged past its first windows: one line, exit 2, and the user's older file where it was."""
    target = tmp_path / "t.json"
    target.write_text("the user's older export")
    monkeypatch.setattr(perfetto_stream, "EVENTS_PER_WINDOW", 1000)
    read = perfetto_stream.WindowedExport.traces

    def damaged_after_two_windows(self):
        for number, trace in enumerate(read(self)):
            if number == 2:
                raise NotAnExportError(f"{H200_NODE}: the file is damaged (database disk image is malformed)")
            yield trace

    monkeypatch.setattr(perfetto_stream.WindowedExport, "traces", damaged_after_two_windows)
    assert main(["export", "--no-cache", str(H200_NODE), "-o", str(target)]) == 2
    assert target.read_text() == "the user's older export" and [p.name for p in tmp_path.iterdir()] == ["t.json"]
