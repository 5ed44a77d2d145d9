"""Attribution from other sources and other layouts: Nsight node-creation events (checked in SQL), an
Nsight replay against a Kineto capture, emit_nvtx ranges, and operator shapes as the profiler writes them."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3

import pytest

from graphscope.analysis.capture_ops import attribute
from graphscope.cli import main
from graphscope.trace import load_trace
from tests.analysis.test_attribution import DECODER, Trace
from tests.conftest import DATA

NODE_SQL = """
WITH work AS ({work}),
made AS (SELECT w.node, c.originalGraphNodeId AS original FROM work w
         JOIN CUDA_GRAPH_NODE_EVENTS c ON c.graphNodeId = w.node AND c.originalGraphNodeId IS NOT NULL),
at AS (SELECT m.node, e.start, e.globalTid FROM made m
       JOIN CUDA_GRAPH_NODE_EVENTS e ON e.graphNodeId = m.original AND e.originalGraphNodeId IS NULL)
SELECT at.node,
       (SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
        WHERE r.globalTid = at.globalTid AND r.start <= at.start AND r."end" >= at.start),
       (SELECT n.text FROM NVTX_EVENTS n WHERE n.globalTid = at.globalTid AND n.start <= at.start
        AND n."end" >= at.start AND n.eventType = 59 ORDER BY n.start DESC LIMIT 1)
FROM at ORDER BY at.node
"""


@pytest.mark.parametrize("name", ["h200_forkjoin_node", "h200_torch_mlp_node", "h200_seed_vecadd_node"])
def test_a_node_mode_nsight_export_is_attributed_through_its_creation_events(name):
    """No capture trace: each replayed node's instantiated id leads back (originalGraphNodeId) to the node
    capture made, whose creation time and thread give the API call and the NVTX range; checked in SQL."""
    path = DATA / f"{name}.sqlite"
    found = attribute(load_trace(path), stacks=True)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        work = " UNION ".join(
            f"SELECT DISTINCT graphNodeId AS node FROM CUPTI_ACTIVITY_KIND_{t} WHERE graphNodeId IS NOT NULL"
            for t in ("KERNEL", "MEMCPY", "MEMSET")
            if f"CUPTI_ACTIVITY_KIND_{t}" in tables
        )
        expected = db.execute(NODE_SQL.format(work=work)).fetchall()
    assert len(found["nodes"]) == len(expected) > 0
    ours = [(n["api"], n["operator"]) for n in found["nodes"]]  # both sorted by graphNodeId
    assert ours == [(re.sub(r"_v\d+$", "", api), text) for _, api, text in expected]
    assert {g["match"] for g in found["graphs"]} == {"node creation events"} and found["unmatched"] == []
    assert found["coverage"]["api"] == 1.0 and found["coverage"]["capture"] == 1.0
    (capture,) = found["captures"]
    assert capture["file"] is None and capture["graph"] == 1  # the graph capture made; this file itself


def test_shapes_name_scalars_and_tensor_lists_as_the_profiler_wrote_them(tmp_path):
    """`Input Dims` [] with type Scalar is a scalar; a list of lists is a TensorList (aten::cat)."""
    trace = Trace()
    add = {"op": "aten::add", "dims": [[4, 16], [4, 16], []], "types": ["c10::Half", "c10::Half", "Scalar"]}
    cat = {"op": "aten::cat", "dims": [[[2, 8], [2, 8]], []], "types": ["TensorList", "Int"]}
    trace.capture([add, cat])
    trace.replay([("add", 4, 2.0), ("cat", 2, 1.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    assert [n["shapes"] for n in found["nodes"]] == [
        "c10::Half[4, 16], c10::Half[4, 16], Scalar",
        "TensorList[[2, 8], [2, 8]], Int",
    ]


def test_a_real_trace_s_operator_shapes_are_read_for_every_operator_that_has_them():
    """hta's 16-rank graph-launch trace (record_shapes on): one shapes text per cpu_op with Input Dims,
    counted a second way over the plain JSON."""
    path = DATA / "kineto" / "hta__rank0_of_16_graph_launches.json.gz"
    with gzip.open(path, "rt") as stream:
        events = json.load(stream)["traceEvents"]
    with_dims = [
        e for e in events if e.get("cat") == "cpu_op" and e.get("ph") == "X" and (e.get("args") or {}).get("Input Dims")
    ]
    trace = load_trace(path)
    shapes = trace.nvtx.shapes[trace.nvtx.shapes >= 0]
    assert len(shapes) == len(with_dims) > 1000
    select = next(e for e in with_dims if e["args"]["Input Dims"] == [[1], [], []])
    assert select["args"]["Input type"] == ["int", "Scalar", "Scalar"]
    assert trace.symbols.lookup("int[1], Scalar, Scalar") is not None


@pytest.mark.parametrize("dims", ["[[4, 16]", "3", '"text"', "[1, 2]", "null", "{}"])
def test_shapes_a_profiler_never_writes_are_left_out_and_the_trace_still_reads(tmp_path, dims):
    trace = Trace()
    trace.capture([DECODER[0]])
    trace.replay([("gemm", 8, 10.0)])
    path = trace.write(tmp_path / "t.json.gz")
    with gzip.open(path, "rt") as stream:
        text = stream.read().replace('"Input Dims": [[4, 16], [16, 16]]', f'"Input Dims": {dims}')
    with gzip.open(path, "wt") as stream:
        stream.write(text)
    try:
        loaded = load_trace(path)
    except Exception as exc:  # invalid JSON is refused with one line, as any broken trace
        assert type(exc).__name__ == "NotAnExportError"
        return
    assert len(loaded.nvtx) > 0 and (loaded.nvtx.shapes >= 0).sum() == 0
    assert attribute(loaded, stacks=True)["nodes"][0]["operator"] == "aten::mm"


def test_an_nsight_replay_with_a_kineto_capture_takes_the_capture_s_fields_first(tmp_path):
    """The fork/join export's graph (copy, memset, six kernels) against a hand-made capture trace of the
    same calls: operators and modules come from the capture trace; node creation fills nothing it told."""
    capture = Trace()
    calls = [{"op": "aten::copy_", "kind": "memcpy"}, {"op": "aten::zero_", "kind": "memset"}]
    calls += [{"op": f"aten::op{i}", "modules": ["Net_0"], "dims": [[i + 1]]} for i in range(6)]
    capture.capture(calls)
    captured = load_trace(capture.write(tmp_path / "c.json.gz"))
    found = attribute(load_trace(DATA / "h200_forkjoin_node.sqlite"), [captured])
    assert [g["match"] for g in found["graphs"]] == ["exact"]
    ops = {o["operator"]: o["kinds"] for o in found["operators"]}
    assert ops == {"aten::copy_": {"memcpy": 1}, "aten::zero_": {"memset": 1}} | {
        f"aten::op{i}": {"kernel": 1} for i in range(6)
    }
    assert found["coverage"]["module"] == pytest.approx(
        sum(o["gpu_ns"] for o in found["operators"] if o["module"] == "Net_0") / found["coverage"]["gpu_ns"]
    )


def test_an_emit_nvtx_range_names_the_operator_and_its_sizes():
    from graphscope.analysis.attribution import _operator_text

    text = "aten::addmm, seq = 12, op_id = 40, sizes = [[4, 16], [16, 16], [16]], input_op_ids = [(38, 0)]"
    assert _operator_text(text, kineto=False) == ("aten::addmm", "[[4, 16], [16, 16], [16]]")
    assert _operator_text("capture", kineto=False) == ("capture", None)


def test_nodes_without_an_operator_are_told_apart_by_the_call_that_made_them(capsys):
    """The torch MLP export has no NVTX around its capture: cuBLAS's cuLaunchKernelEx GEMMs and the
    elementwise cudaLaunchKernel kernels are still two rows; their time checked in SQL."""
    path = DATA / "h200_torch_mlp_node.sqlite"
    assert main(["summary", str(path), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "(no operator: cuLaunchKernelEx)" in text and "(no operator: cudaLaunchKernel)" in text
    rows = {o["api"]: o["gpu_ns"] for o in attribute(load_trace(path))["operators"]}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        gemm = db.execute(
            'SELECT SUM(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName '
            "WHERE k.graphNodeId IS NOT NULL AND s.value LIKE 'nvjet%'"
        ).fetchone()[0]
    assert rows["cuLaunchKernelEx"] == gemm  # cuBLAS's GEMMs are the nvjet kernels
