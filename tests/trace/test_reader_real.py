"""The reader on every real export in tests/data: 2021-era layouts to 2025.x, Linux and Windows."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from graphscope.trace import load_trace
from tests.conftest import DATA, EXPORTS, FORKJOIN, H200_GRAPH, H200_NODE, TORCH_MLP


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem[:40])
def test_every_export_loads_sorted_and_untouched(path):
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    trace = load_trace(path)
    for name in ("api", "kernels", "memcpy", "memset", "sync", "graph_launches", "nvtx"):
        table = getattr(trace, name)
        assert np.all(np.diff(table.start) >= 0), f"{name} not sorted by start"
        if name != "nvtx":
            assert np.all(table.end >= table.start)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not list(path.parent.glob(path.name + "-*")), "reader left a journal or WAL file"


def test_graph_trace_modes_are_detected():
    assert load_trace(H200_NODE).info.graph_trace_mode == "node"
    assert load_trace(H200_GRAPH).info.graph_trace_mode == "graph"
    assert load_trace(DATA / "nikitinvv__recon-stream__report13.sqlite").info.graph_trace_mode is None


def test_node_mode_rows_carry_graph_node_ids_and_lineage():
    trace = load_trace(FORKJOIN)
    nodes = trace.kernels.graph_node[trace.kernels.graph_node >= 0]
    assert len(nodes) == 30  # 6 kernels x 5 launches
    assert set((nodes >> 32).tolist()) == {2}  # the instantiated graph
    assert (trace.memcpy.graph_node >= 0).sum() == 5 and (trace.memset.graph_node >= 0).sum() == 5
    clones = trace.graph_nodes.original_node >= 0
    assert clones.any() and set((trace.graph_nodes.original_node[clones] >> 32).tolist()) == {1}


def test_graph_mode_has_whole_graph_rows_and_creation_events():
    trace = load_trace(H200_GRAPH)
    assert len(trace.graph_launches) == 3
    assert np.all(trace.graph_launches.graph_exec_id == 2)
    assert (trace.kernels.graph_node < 0).all()
    names = {trace.symbols.name(int(i)) for i in trace.graph_events.name}
    assert names == {"Graph Creation", "GraphExec Creation"}


def test_names_are_interned_and_resolve():
    trace = load_trace(H200_NODE)
    short = {trace.symbols.name(int(i)) for i in np.unique(trace.kernels.short_name)}
    assert "vec_add" in short
    api_names = {trace.symbols.name(int(i)) for i in np.unique(trace.api.name)}
    assert {"cuLaunchKernel", "cudaGraphLaunch_v10000"} <= api_names
    assert trace.kernels.short_name.dtype == np.int16  # 1,300 strings: ids held in the narrowest type


def test_nvtx_text_inline_and_registered():
    inline = load_trace(H200_NODE)
    labels = {inline.symbols.name(int(i)) for i in inline.nvtx.text}
    assert {"eager_0", "capture", "graph_2"} <= labels
    registered = load_trace(DATA / "MohanadOdema__DLProf__nsys_profile.sqlite")
    assert all(registered.symbols.name(int(i)).strip() for i in registered.nvtx.text)


def test_nvtx_only_export_says_what_it_lacks():
    trace = load_trace(DATA / "YoonKyonghwan__EfficientCenterFormer__poolformer.sqlite")
    assert len(trace.nvtx) == 21998 and len(trace.kernels) == 0 and len(trace.api) == 0
    assert any("no kernel table" in text for text in trace.info.lacks)
    assert any("no CUDA API table" in text for text in trace.info.lacks)


def test_wsl_export_with_api_rows_but_no_gpu_table():
    trace = load_trace(DATA / "ZhangXin8069__qcu__report1.sqlite")
    assert len(trace.api) == 5497 and len(trace.kernels) == 0
    assert any("no GPU activity was recorded" in text for text in trace.info.lacks)


def test_oldest_layout_without_metadata_or_mangled_names():
    trace = load_trace(DATA / "PolPuigPuy__OpenACC_Project_PolPuig__report2.sqlite")
    assert trace.info.nsys_version is None and "2021" in trace.info.layout
    assert len(trace.kernels) == 1935 and (trace.kernels.mangled == -1).all()
    assert trace.gpus[0].name == "NVIDIA GeForce RTX 3080"


def test_windows_export_lists_only_cuda_gpus():
    trace = load_trace(DATA / "extra-p__extrap__profile1.sqlite")
    assert trace.info.platform == "windows-desktop"
    assert [g.name for g in trace.gpus] == ["GeForce GTX 1060 with Max-Q Design"]


def test_gpu_ordinal_comes_from_the_cuda_device_table():
    trace = load_trace(DATA / "cestwc__balinski-and-gomory-cuda__report1.sqlite")
    by_device = {g.device: g.bus for g in trace.gpus}
    assert by_device == {0: "0000:01:00.0", 1: "0000:41:00.0"}  # gpuId 1 is CUDA device 0, and vice versa


def test_processes_threads_and_streams():
    trace = load_trace(TORCH_MLP)
    assert len(trace.processes) == 1 and trace.symbols.name(int(trace.processes.name[0])) == "python3"
    assert set(np.unique(trace.api.thread)) <= set(range(len(trace.threads)))
    assert len(trace.streams) == 136 and trace.streams.priority.min() < 0
