"""The newest Nsight fields in Details: a kernel's launch type, cluster and green context; an event record's
event and stream and a wait's record (CUPTI_ACTIVITY_KIND_CUDA_EVENT); the graph trace options. Read
where present, each checked against plain SQL over the file; absent, Details adds nothing.

No shipped export launches cooperative or clustered kernels on a green context, nor records a graph trace
option besides the mode: `_made_newer` builds one by copying the shipped fork-join export and adding the
2025.5/2026 columns, values and capture option with plain SQL (the column names as the 2025.5 export
cestwc__balinski… declares them)."""

from __future__ import annotations

import sqlite3

import pytest

from graphscope.view.describe import describe
from graphscope.view.document import open_document
from graphscope.view.layout import API, GRAPH_GROUP, KERNEL
from tests.conftest import DATA, FORKJOIN

KINETO_REPLAY = DATA / "kineto" / "h200_torch_linear_replay.json.gz"
OLD_EXPORT = DATA / "Lianhang666__gpu4__report2.sqlite"  # launchType only, no cluster or green context


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")


def _made_newer(export_copy):
    path, conn = export_copy(FORKJOIN)
    for column in ("clusterX", "clusterY", "clusterZ", "clusterSchedulingPolicy"):
        conn.execute(f"ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN {column} INTEGER")
    conn.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT ADD COLUMN timestamp INTEGER")
    first = conn.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    conn.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET launchType = 2, clusterX = 2, clusterY = 1, clusterZ = 1, "
        "clusterSchedulingPolicy = 1, greenContextId = 5 WHERE start = ?",
        (first,),
    )
    conn.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET clusterX = 0, clusterY = 0, clusterZ = 0 WHERE start <> ?", (first,)
    )
    conn.execute(  # each record's GPU completion: 2 us after its call returned
        'UPDATE CUPTI_ACTIVITY_KIND_CUDA_EVENT SET timestamp = (SELECT r."end" + 2000 FROM '
        "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = CUPTI_ACTIVITY_KIND_CUDA_EVENT.correlationId)"
    )
    conn.execute(
        "INSERT INTO META_DATA_CAPTURE (name, value) "
        "VALUES ('PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:DEVICE_LAUNCH', 'true')"
    )
    conn.execute(  # CUPTI_ActivityDeviceGraphTrace's fields; Nsight's SQLite form of them is not documented
        'CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE (start INTEGER, "end" INTEGER, deviceId INTEGER, '
        "graphId INTEGER, launcherGraphId INTEGER, deviceLaunchMode INTEGER, contextId INTEGER, streamId INTEGER)"
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE VALUES (?, ?, 0, 9, 2, 0, 1, 7)",
        [(t, t + 1000) for t in (1_000, 5_000, 9_000)],
    )
    conn.commit()
    return path, conn


def _rows_named(document, prefix: str) -> list[int]:
    api, names = document.trace.api, document.trace.symbols
    return [r for r in range(len(api)) if names.name(int(api.name[r])).startswith(prefix)]


def test_a_cooperative_clustered_kernel_on_a_green_context_is_described(export_copy):
    path, conn = _made_newer(export_copy)
    document = open_document(path)
    kernels = document.trace.kernels
    first = int(kernels.start.argmin())
    fields = dict(describe(document, KERNEL, first)[1])
    assert {"launch_type", "green_context", "cluster_x", "cluster_policy"} <= set(kernels.columns)
    sql = conn.execute(
        "SELECT launchType, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, greenContextId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = ?",
        (int(kernels.start[first]),),
    ).fetchone()
    assert sql == (2, 2, 1, 1, 1, 5)
    assert fields["launch type"] == "cooperative (one device)"
    assert fields["cluster"] == "2x1x1 blocks, spread scheduling"
    assert fields["green context"] == "5"
    other = dict(describe(document, KERNEL, (first + 1) % len(kernels))[1])
    assert other["launch type"] == "regular" and "cluster" not in other and "green context" not in other


def test_every_wait_names_the_record_it_waited_for_as_sql_joins_them(export_copy):
    path, conn = _made_newer(export_copy)
    document = open_document(path)
    expected = dict(
        conn.execute(  # wait's correlation -> (event, stream) of its record, joined on eventSyncId
            "SELECT s.correlationId, e.eventId || ' on stream ' || e.streamId "
            "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s "
            "JOIN CUPTI_ACTIVITY_KIND_CUDA_EVENT e ON e.eventSyncId = s.eventSyncId WHERE s.syncType = 2"
        ).fetchall()
    )
    waits = _rows_named(document, "cudaStreamWaitEvent")
    assert len(waits) == 8 and len(expected) == 6  # two waits carry eventSyncId 0: their record is not known
    for row in waits:
        fields = dict(describe(document, API, row)[1])
        correlation = int(document.trace.api.correlation[row])
        if correlation not in expected:
            assert "waits for" not in fields
            continue
        assert fields["waits for"].startswith(f"event {expected[correlation]} (device 0), recorded by cudaEventRecord")
    records = [dict(describe(document, API, row)[1]) for row in _rows_named(document, "cudaEventRecord")]
    table = conn.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT").fetchone()[0]
    assert len(records) == 9 and sum("event recorded" in fields for fields in records) == table == 7
    made = next(fields for fields in records if "event recorded" in fields)
    assert made["event reached"].endswith("on the GPU, 2 us after the call returned")


def test_the_graph_trace_options_beside_the_mode_show_on_a_graph_launch(export_copy):
    path, _ = _made_newer(export_copy)
    fields = dict(describe(open_document(path), GRAPH_GROUP, 0)[1])
    assert fields["graph trace options"] == "device_launch = true"
    assert fields["device-launched graphs"] == "3 executions traced whole (not drawn)"
    shipped = dict(describe(open_document(FORKJOIN), GRAPH_GROUP, 0)[1])
    assert "graph trace options" not in shipped and "device-launched graphs" not in shipped


@pytest.mark.parametrize("trace", [FORKJOIN, OLD_EXPORT, KINETO_REPLAY])
def test_exports_without_the_new_fields_describe_as_before(trace):
    document = open_document(trace)
    fields = dict(describe(document, KERNEL, 0)[1])
    assert "cluster" not in fields and "green context" not in fields
    expected = "regular" if trace.suffix == ".sqlite" else None  # a PyTorch-profiler trace has no launch type
    assert fields.get("launch type") == expected
    assert not {"cluster_x", "cluster_policy"} & set(document.trace.kernels.columns)  # absent: not even defaults
    if trace == FORKJOIN:  # the real 2025.3 export: records without completion times
        record = _rows_named(document, "cudaEventRecord")[0]
        described = dict(describe(document, API, record)[1])
        assert "event recorded" in described and "event reached" not in described


def test_an_export_whose_event_table_is_gone_adds_nothing(export_copy):
    path, conn = export_copy(FORKJOIN)
    conn.execute("DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT")
    conn.commit()
    document = open_document(path)
    record = _rows_named(document, "cudaEventRecord")[0]
    assert "event recorded" not in dict(describe(document, API, record)[1])
    sqlite3.connect(path).close()
