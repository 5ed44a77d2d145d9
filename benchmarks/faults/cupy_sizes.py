"""A SIZES workload whose stage 2 takes its grid from a dummy batch of one row while its n follows the
batch (a split count picked for a dummy size): at every size but 1 the graph, and eager too, leave rows
unwritten. Nothing compares wrong between eager and graph; the audit at two sizes names the stage."""

import numpy as np

SOURCE = r"""
extern "C" __global__ void NAME(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * x[i] + 1.0f;
}
"""
SIZES = [4, 64]
COLS, STAGES, FROZEN = 1024, 4, 2


def setup(ctx):
    cp = ctx.cupy
    rows = ctx.batch or SIZES[-1]
    top = ctx.max_batch or rows
    if not hasattr(ctx, "_sizes_bufs"):
        ctx._sizes_bufs = [cp.ones(top * COLS, cp.float32) for _ in range(STAGES + 1)]
    bufs = [b[: rows * COLS] for b in ctx._sizes_bufs]
    kernels = [ctx.kernel(SOURCE.replace("NAME", f"size_stage{s}"), f"size_stage{s}") for s in range(STAGES)]
    ctx.outputs(y=bufs[-1])

    def step(ctx):
        for s in range(STAGES):
            grid_rows = 1 if s == FROZEN else rows
            ctx.launch(kernels[s], problem=grid_rows * COLS, block=256, name=f"size_stage{s}",
                       args=(bufs[s], bufs[s + 1], np.int32(rows * COLS)))

    return step
