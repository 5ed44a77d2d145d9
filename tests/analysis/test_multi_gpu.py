"""One export of two GPUs: lanes per GPU, busy time and a launch verdict per GPU, each checked against
plain SQL over the export. Made from a real H200 export by moving its graph replays to a second GPU."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from graphscope.analysis.summary import analyze, summarize
from graphscope.trace.reader import load_trace
from graphscope.view.layout import build_layout
from tests.conftest import DATA, union_ns


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    """Eager steps on GPU 0, graph replays (every graph node kernel) on GPU 1."""
    path = tmp_path_factory.mktemp("multi") / "two_gpus.sqlite"
    shutil.copy(DATA / "h200_seed_vecadd_node.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1 WHERE graphNodeId IS NOT NULL")
        second = {"id": "1", "cuDevice": "1", "name": "'second GPU'", "gpuId": "1", "cudaId": "1"}
        for table in ("TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"):  # the GPU, and its CUDA ordinal
            columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            picked = ", ".join(second.get(c, c) for c in columns)
            db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {picked} FROM {table} LIMIT 1")
    return path


def _busy_by_sql(path, device: int) -> int:
    """Busy time of one device's kernels: the union of their intervals, by a plain sweep over SQL rows."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ? ORDER BY start", [device]
        ).fetchall()
    return union_ns(rows)


def test_each_gpu_gets_its_lanes_busy_time_and_launch_verdict(two_gpus):
    trace = load_trace(two_gpus)
    analysis = analyze(trace)
    summary = summarize(trace, analysis=analysis)
    gpus = {g["device"]: g for g in summary["gpu"]}
    assert set(gpus) == {0, 1} and gpus[1]["name"] == "second GPU"
    for device in (0, 1):
        assert gpus[device]["busy_ns"] == _busy_by_sql(two_gpus, device)
    eager, replays = gpus[0]["launch"], gpus[1]["launch"]
    assert eager["launch_bound"] is True and eager["verdict"].startswith("launch-bound: launch overhead")
    assert replays["steady_state"]["eager_launch_calls"] == 0 and replays["steady_state"]["graph_launch_calls"] >= 1
    assert eager["steady_state"]["graph_launch_calls"] == 0
    assert eager["calls"] + replays["calls"] == (analysis.launches.first_work >= 0).sum()  # calls with GPU work
    groups = {lane.group for lane in build_layout(trace).lanes if lane.kind == "gpu"}
    assert any(g.startswith("GPU 0") for g in groups) and any(g.startswith("GPU 1") for g in groups)


def test_one_gpu_exports_keep_their_single_verdict():
    trace = load_trace(DATA / "h200_seed_vecadd_node.sqlite")
    summary = summarize(trace, analysis=analyze(trace))
    assert len(summary["gpu"]) == 1 and "launch" not in summary["gpu"][0]
