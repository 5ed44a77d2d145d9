"""Inference steps as engineers write them, on a real GPU: a request pipeline with copies in and out,
a Triton kernel between GEMMs, a transformers decode step with a static KV cache, and the DAG telling
which module and operator launched each library kernel."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from graphscope.graph.model import Dag
from graphscope.workload.runner import run_workload
from graphscope.workload.session import WorkloadSession

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _torch_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


needs_torch = pytest.mark.skipif(not _torch_cuda(), reason="needs PyTorch with CUDA")


def _run_and_dag(name: str, reps: int = 30) -> tuple[dict, Dag]:
    data = run_workload(EXAMPLES / f"{name}.py", reps=reps, warmup=5).to_json()
    print(name, json.dumps({"speedup": data["speedup"], "verdict": data["verdict"]}))
    with WorkloadSession(EXAMPLES / f"{name}.py") as session:
        dag = Dag.from_json(session.request("dag"))
    print(name, "notes:", dag.notes)
    return data, dag


def test_the_request_pipeline_captures_its_copies_and_the_host_receives_the_same_bytes():
    data, dag = _run_and_dag("request_pipeline")
    assert data["outputs_match"] and data["modes"]["graph"]["outputs"]["exact"]  # the host's answer, bit for bit
    assert [n.name if n.type != "kernel" else n.type for n in dag.nodes] == [
        "memcpy HtoD", "memset", "kernel", "kernel", "kernel", "memcpy DtoH",
    ]  # fmt: skip
    copy_in, copy_out = dag.nodes[0], dag.nodes[-1]
    assert copy_in.detail["bytes"] == 256 * 1024 and copy_out.detail["bytes"] == 256 * 4
    assert dag.nodes[3].block == (32, 8, 1)  # the 2-D kernel, tunable
    assert data["speedup"]["wall_ns"]["value"] > 1.0


def test_every_replay_reads_what_the_host_wrote_since_the_last(tmp_path):
    """The point of a captured copy in: the graph reads the pinned buffer's current contents."""
    from graphscope.workload.child.live import LiveWorkload

    path = tmp_path / "echo.py"
    path.write_text('''
import numpy as np
SOURCE = r"""extern "C" __global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }"""
N = 4096
BUFFERS = {}
def setup(ctx):
    cp = ctx.cupy
    k = ctx.kernel(SOURCE, "twice")
    BUFFERS["request"], BUFFERS["answer"] = ctx.pinned(N, np.float32), ctx.pinned(N, np.float32)
    x, y = cp.empty(N, cp.float32), cp.empty(N, cp.float32)
    ctx.outputs(answer=BUFFERS["answer"])
    def step(ctx):
        ctx.copy(x, BUFFERS["request"])
        ctx.launch(k, problem=N, block=256, args=(x, y, np.int32(N)))
        ctx.copy(BUFFERS["answer"], y)
    return step
''')
    live = LiveWorkload(path)
    live.capture_graph()
    buffers = live.module.BUFFERS
    for value in (3.0, -7.5, 11.0):
        buffers["request"][:] = np.arange(4096, dtype=np.float32) + value
        live.fw.launch(live.graph)
        live.fw.synchronize()
        np.testing.assert_array_equal(buffers["answer"], 2 * (np.arange(4096, dtype=np.float32) + value))


@needs_torch
def test_a_triton_kernel_between_gemms_is_captured_and_named_as_a_triton_kernel():
    data, dag = _run_and_dag("triton_mlp")
    assert data["outputs_match"] and data["modes"]["graph"]["outputs"]["checked"]
    triton = [n for n in dag.kernel_nodes() if n.detail.get("kernel") == "Triton"]
    assert [n.name for n in triton] == ["bias_gelu_kernel"]
    assert "num_warps" in triton[0].detail["tunable"] and triton[0].site is None
    assert any("Triton kernels" in note for note in dag.notes)


@needs_torch
def test_the_dag_of_a_torch_block_says_which_module_and_operator_launched_each_kernel():
    _, dag = _run_and_dag("torch_block", reps=10)
    kernels = dag.kernel_nodes()
    attributed = [n for n in kernels if n.detail.get("launched_by")]
    print("launched by:", [n.detail.get("launched_by") for n in kernels])
    assert len(attributed) >= 0.8 * len(kernels)
    modules = {n.detail.get("module") for n in attributed}
    assert {"qkv", "up", "down", "proj"} <= modules
    assert any(n.detail.get("op") == "aten::linear" for n in attributed)


@needs_torch
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
def test_a_transformers_decode_step_with_a_static_cache_and_reset_matches_and_is_attributed():
    data, dag = _run_and_dag("hf_decode", reps=20)
    assert data["outputs_match"], data["verdict"]  # reset(ctx) puts the cache back: no drift
    assert not data["modes"]["graph"]["outputs"].get("nonfinite")
    kernels = dag.kernel_nodes()
    modules = {n.detail.get("module") for n in kernels}
    print("hf modules:", sorted(m for m in modules if m)[:12], len(kernels), "kernels")
    assert any(m and m.startswith("model.layers.0.self_attn") for m in modules)
    assert not any(n.name.startswith("_Z") for n in kernels)
