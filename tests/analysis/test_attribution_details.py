"""Details of a replayed kernel name what made its node at capture: operator, module, shapes, line."""

from __future__ import annotations

import numpy as np

from graphscope.trace import load_trace
from graphscope.view.describe import describe
from graphscope.view.document import build_document
from graphscope.view.layout import KERNEL
from tests.analysis.test_attribution import DECODER, USER, Trace
from tests.conftest import DATA


def test_details_of_a_replayed_kernel_show_its_op_module_shapes_and_line(tmp_path):
    trace = Trace()
    trace.capture(DECODER)
    for _ in range(2):
        trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    loaded = load_trace(trace.write(tmp_path / "t.json.gz"))
    document = build_document(loaded, panels=False)
    names = [loaded.symbols.name(int(n)) for n in loaded.kernels.name.tolist()]
    row = names.index("add")  # the first replay's second node
    _, fields = describe(document, KERNEL, row)
    shown = dict(fields)
    assert shown["operator"] == "aten::add" and shown["module"] == "Decoder_0.Layer_0"
    assert shown["input shapes"] == "float[4, 16], float[4, 16]" and shown["line"] == USER
    assert shown["captured from"] == "cudaLaunchKernel"


def test_details_of_an_nsight_node_kernel_show_its_range_and_call():
    loaded = load_trace(DATA / "h200_forkjoin_node.sqlite")
    document = build_document(loaded, panels=False)
    row = int(np.flatnonzero(loaded.kernels.graph_node >= 0)[0])
    shown = dict(describe(document, KERNEL, row)[1])
    assert shown["operator"] == "capture" and shown["captured from"] == "cuLaunchKernel"
    assert "module" not in shown and "line" not in shown  # what the export does not tell is not shown
    eager = int(np.flatnonzero(loaded.kernels.graph_node < 0)[0])
    assert "operator" not in dict(describe(document, KERNEL, eager)[1])
