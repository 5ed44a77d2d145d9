"""A request pipeline as a server runs it: the request copied in from page-locked host memory, scaled,
passed through a 2-D tiled kernel and reduced per row, and the answer copied back out to the host.

The copies use ctx.copy (cudaMemcpyAsync on the step's stream), so the whole chain, copies included,
is captured as one graph: memcpy HtoD, memset, three kernels, memcpy DtoH. The answer in host memory is
a declared output, so eager and graph are compared on what the host receives, byte for byte.
"""

import numpy as np

ROWS, COLS = 256, 1024

SOURCE = r"""
extern "C" __global__ void normalize(const unsigned char* raw, float* x, float scale, float shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = raw[i] * scale - shift;
}
extern "C" __global__ void mix(const float* x, const float* w, float* y, int rows, int cols) {
    // 2-D: one thread per (column, row); each output mixes its row with the next one
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < cols && r < rows) {
        int below = (r + 1) % rows;
        y[r * cols + c] = w[c] * x[r * cols + c] + (1.f - w[c]) * x[below * cols + c];
    }
}
extern "C" __global__ void row_max(const float* y, float* best, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float m = best[r];
        for (int c = 0; c < cols; c++) m = fmaxf(m, y[r * cols + c]);
        best[r] = m;
    }
}
"""


def setup(ctx):
    cp = ctx.cupy
    normalize, mix, row_max = (ctx.kernel(SOURCE, name) for name in ("normalize", "mix", "row_max"))
    request = ctx.pinned((ROWS, COLS), np.uint8)  # where the server's front end writes the next request
    request[:] = np.random.default_rng(0).integers(0, 256, (ROWS, COLS), dtype=np.uint8)
    answer = ctx.pinned(ROWS, np.float32)  # where it reads the answer
    raw = cp.empty((ROWS, COLS), cp.uint8)
    x, y = cp.empty((ROWS, COLS), cp.float32), cp.empty((ROWS, COLS), cp.float32)
    weights = cp.linspace(0.1, 0.9, COLS, dtype=cp.float32)
    best = cp.empty(ROWS, cp.float32)
    ctx.outputs(answer=answer, y=y)

    def step(ctx):
        ctx.copy(raw, request)  # host -> device, from page-locked memory
        best.data.memset_async(0, best.nbytes, stream=ctx.stream)  # the running max starts at 0.0
        n = ROWS * COLS
        ctx.launch(normalize, problem=n, block=256, args=(raw, x, np.float32(1 / 127.5), np.float32(1.0), np.int32(n)))
        ctx.launch(mix, problem=(COLS, ROWS), block=(32, 8), args=(x, weights, y, np.int32(ROWS), np.int32(COLS)))
        ctx.launch(row_max, problem=ROWS, block=64, args=(y, best, np.int32(ROWS), np.int32(COLS)))
        ctx.copy(answer, best)  # device -> host, into page-locked memory

    return step
