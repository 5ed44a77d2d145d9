"""A small inference-like pipeline on two streams: a staging copy, a memset, two branches forked and
joined with events, then a reduction. Captured, it becomes an 8-node graph that runs on two streams.
"""

import numpy as np

SOURCE = r"""
extern "C" __global__ void scale(const float* x, float* y, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * f;
}
extern "C" __global__ void relu(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] > 0.f ? y[i] : 0.f;
}
extern "C" __global__ void add2(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void rowsum(const float* x, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) { float s = 0.f; for (int j = 0; j < cols; j++) s += x[r * cols + j]; out[r] = s; }
}
"""
ROWS, COLS = 512, 1024
N = ROWS * COLS


def setup(ctx):
    cp = ctx.cupy
    scale, relu, add2, rowsum = (ctx.kernel(SOURCE, name) for name in ("scale", "relu", "add2", "rowsum"))
    staging = cp.random.rand(N, dtype=cp.float32) - 0.5
    x, y1, y2, z = (cp.empty(N, cp.float32) for _ in range(4))
    out = cp.empty(ROWS, cp.float32)
    side = ctx.new_stream()
    ctx.outputs(out=out, z=z)

    def step(ctx):
        main = ctx.stream
        x.data.copy_from_device_async(staging.data, x.nbytes, stream=main)
        out.data.memset_async(0, out.nbytes, stream=main)
        fork = cp.cuda.Event(disable_timing=True)
        fork.record(main)
        side.wait_event(fork)
        ctx.launch(scale, problem=N, block=256, args=(x, y1, np.float32(2.0), np.int32(N)), name="scale_a")
        ctx.launch(relu, problem=N, block=256, args=(y1, np.int32(N)), name="relu_a")
        ctx.launch(
            scale, problem=N, block=128, args=(x, y2, np.float32(-1.0), np.int32(N)), name="scale_b", stream=side
        )
        ctx.launch(relu, problem=N, block=512, args=(y2, np.int32(N)), name="relu_b", stream=side)
        join = cp.cuda.Event(disable_timing=True)
        join.record(side)
        main.wait_event(join)
        ctx.launch(add2, problem=N, block=256, args=(y1, y2, z, np.int32(N)))
        ctx.launch(rowsum, problem=ROWS, block=64, args=(z, out, np.int32(ROWS), np.int32(COLS)))

    return step
