"""Replayed graph work per module (view/module_stats.py), checked against plain sums over the trace and
against `summary --json`'s capture_attribution (real H200 traces)."""

from __future__ import annotations

import numpy as np

from graphscope.analysis.capture_ops import attribute, attribution
from graphscope.trace import load_trace
from graphscope.view.module_stats import NOT_ATTRIBUTED, module_rows
from tests.conftest import H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"


def test_the_linear_s_gemm_is_its_module_s_and_relu_is_not_attributed():
    """relu(Linear(x)) replayed 5 times: the GEMM was made inside Linear_0, relu outside any module."""
    replay = load_trace(REPLAY)
    rows = module_rows(attribution(replay, [load_trace(CAPTURE)])[0])
    found = [(r.module, r.nodes, r.kernels, r.replayed) for r in rows]
    assert found == [("Linear_0", 1, 5, 5), (NOT_ATTRIBUTED, 1, 5, 5)]
    kernels = replay.kernels
    duration = (kernels.end - kernels.start).astype(np.int64)
    gemm = np.array(["gemm" in replay.symbols.name(int(n)) for n in kernels.name.tolist()])
    replayed = kernels.graph_node >= 0
    assert rows[0].gpu_ns == int(duration[gemm & replayed].sum())
    assert rows[1].gpu_ns == int(duration[~gemm & replayed].sum())
    found = attribute(replay, load_trace(CAPTURE))  # what summary --json says
    assert [(m["module"], m["gpu_ns"]) for m in found["modules"]] == [("Linear_0", rows[0].gpu_ns)]
    assert sum(r.gpu_ns for r in rows) == found["coverage"]["gpu_ns"]
    assert rows[0].share == found["coverage"]["module"]  # the share with a module is the module coverage
    assert abs(sum(r.share for r in rows) - 1.0) < 1e-12


def test_an_export_without_module_ranges_puts_all_replayed_work_under_not_attributed():
    """The CuPy vecadd's nodes were made inside NVTX 'capture' (an operator, not a module)."""
    trace = load_trace(H200_NODE)
    rows = module_rows(attribution(trace)[0])
    replayed = trace.kernels.graph_node >= 0
    assert [(r.module, r.kernels, r.share) for r in rows] == [(NOT_ATTRIBUTED, int(replayed.sum()), 1.0)]
    assert rows[0].gpu_ns == int((trace.kernels.end - trace.kernels.start)[replayed].astype(np.int64).sum())
