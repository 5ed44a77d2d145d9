"""A batched two-layer MLP step (CuPy kernels and a GEMM through ctx.matmul), capturable at every batch size
in SIZES: `graphscope plan examples/batched_mlp.py` chooses which sizes to capture.

Buffers are allocated once at the largest size (ctx.max_batch); each size's step works on views of them.
"""

import numpy as np

SIZES = [1, 2, 4, 8, 16, 32, 64]
HIDDEN = 1024

SOURCE = r"""
extern "C" __global__ void bias_gelu(float* x, const float* b, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        float v = x[i] + b[i % cols];
        x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}"""


def setup(ctx):
    cp = ctx.cupy
    rows = ctx.batch or SIZES[-1]
    top = ctx.max_batch or rows
    if not hasattr(ctx, "_mlp"):  # once, at the largest size: every size's step uses views of these
        rng = cp.random.default_rng(0)
        ctx._mlp = {
            "x": rng.standard_normal((top, HIDDEN), dtype=cp.float32),
            "w1": rng.standard_normal((HIDDEN, 4 * HIDDEN), dtype=cp.float32) * 0.02,
            "b1": cp.zeros(4 * HIDDEN, cp.float32),
            "w2": rng.standard_normal((4 * HIDDEN, HIDDEN), dtype=cp.float32) * 0.02,
            "h": cp.empty((top, 4 * HIDDEN), cp.float32),
            "y": cp.empty((top, HIDDEN), cp.float32),
        }
    m = ctx._mlp
    x, h, y = m["x"][:rows], m["h"][:rows], m["y"][:rows]
    gelu = ctx.kernel(SOURCE, "bias_gelu")
    ctx.outputs(y=y)

    def step(ctx):
        ctx.matmul(x, m["w1"], out=h)
        ctx.launch(gelu, problem=rows * 4 * HIDDEN, block=256, args=(h, m["b1"], np.int32(rows), np.int32(4 * HIDDEN)),
                   name="bias_gelu")  # fmt: skip
        ctx.matmul(h, m["w2"], out=y)

    return step
