"""In the graph vs alone on a real GPU: a kernel timed alone agrees with a plain CuPy loop of the same
kernel, and the decoder step's side-stream GEMM (beside the main stream's GEMMs) is ranked both ways."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphscope.store.recorder import Recorder
from graphscope.tune.controller import TuningController

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SCALE = '''
SOURCE = r"""
extern "C" __global__ void scale(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = 2.f * x[i];
}
"""
N = 1 << 24
def setup(ctx):
    cp = ctx.cupy
    k = ctx.kernel(SOURCE, "scale")
    x = cp.ones(N, cp.float32)
    y = cp.empty(N, cp.float32)
    ctx.outputs(y=y)
    def step(ctx):
        ctx.launch(k, problem=N, block=256, args=(x, y, N))
    return step
'''


def _plain_loop_ns(block: int, launches: int = 10, reps: int = 30) -> float:
    """The same kernel launched by CuPy `launches` times between two events: per-launch median."""
    import cupy as cp

    kernel = cp.RawKernel(SCALE.split('r"""')[1].split('"""')[0], "scale")
    n = 1 << 24
    x, y = cp.ones(n, cp.float32), cp.empty(n, cp.float32)
    grid = (n + block - 1) // block
    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for _ in range(reps + 3):
        start.record()
        for _ in range(launches):
            kernel((grid,), (block,), (x, y, np.int32(n)))
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) * 1e6 / launches)
    return float(np.median(samples[3:]))


def test_a_kernel_alone_takes_what_a_plain_cupy_loop_of_it_takes(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    controller = TuningController(path, recorder=Recorder(tmp_path / "s.sqlite"))
    try:
        controller.load()
        (knob,) = controller.knobs("scale", [(128, 1, 1), (256, 1, 1), (512, 1, 1)])
        alone = controller.live.alone(knob, list(knob.candidates), 30)
    finally:
        controller.close()
    for block, trial in zip(knob.candidates, alone):
        plain = _plain_loop_ns(block[0])
        print(f"scale block {block[0]}: alone {trial.stats.median:.0f} ns, plain CuPy loop {plain:.0f} ns")
        assert trial.usable and trial.stats.median == pytest.approx(plain, rel=0.15)


def test_the_decoder_side_gemm_ranked_in_the_graph_and_alone(tmp_path):
    controller = TuningController(EXAMPLES / "decoder_step.py", recorder=Recorder(tmp_path / "s.sqlite"))
    try:
        controller.load()
        result = controller.sweep("brute", controller.knobs("side_gemm"))
    finally:
        controller.close()
    (side,) = result.isolation
    data = side.to_json()
    print("decoder side_gemm:", json.dumps({k: v for k, v in data.items() if k != "candidates"}, default=str))
    for row in data["candidates"]:
        print(
            "  ", row["block"], row["in_graph"].get("median_ns"), row["alone"].get("median_ns"), row["alone"]["status"]
        )
    assert data["compared"] >= 4 and data["kendall_tau"] is not None and -1 <= data["kendall_tau"] <= 1
    assert data["regret_ns"] >= 0 or not data["regret_significant"]
    assert all(row["alone"]["how"] == "alone" for row in data["candidates"])
