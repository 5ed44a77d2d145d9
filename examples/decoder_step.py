"""One transformer decoder step for a batch of tokens, as inference engineers write it:

    h = layernorm(x)                      hand-written, one block per row, shared memory sized by the block
    u = h @ W1 ; v = gelu(u) ; o = v @ W2  two GEMMs through ctx.matmul (cuBLAS via PyTorch: it captures)
    s = x @ Ws                            on a side stream, forked and joined with events: a naive 2-D GEMM
    y = x + o + s                         residual
    yt = transpose(y)                     tiled transpose that only works with blockDim.x == 32

`graphscope run` compares eager and graph; `graphscope tune` finds the side GEMM's best 2-D block shape
and records the transpose's other widths as faults (its guard traps), going on without them.
Needs CuPy and PyTorch (pip install -e ".[cuda13,torch]").
"""

import numpy as np

SOURCE = r"""
extern "C" __global__ void layernorm(const float* x, float* y, const float* g, const float* b, int cols) {
    extern __shared__ float buf[];              // 2 x blockDim.x floats: sums and sums of squares
    float* s1 = buf;
    float* s2 = buf + blockDim.x;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float a = 0.f, q = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) { float v = xr[c]; a += v; q += v * v; }
    s1[threadIdx.x] = a;
    s2[threadIdx.x] = q;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) { s1[threadIdx.x] += s1[threadIdx.x + s]; s2[threadIdx.x] += s2[threadIdx.x + s]; }
        __syncthreads();
    }
    float mean = s1[0] / cols;
    float inv = rsqrtf(s2[0] / cols - mean * mean + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mean) * inv * g[c] + b[c];
}
extern "C" __global__ void gelu(const float* u, float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float t = u[i]; v[i] = 0.5f * t * (1.f + tanhf(0.7978845608f * (t + 0.044715f * t * t * t))); }
}
extern "C" __global__ void gemm2d(const float* a, const float* b, float* c, int rows, int inner, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        float acc = 0.f;
        for (int k = 0; k < inner; k++) acc += a[row * inner + k] * b[k * cols + col];
        c[row * cols + col] = acc;
    }
}
extern "C" __global__ void residual(const float* x, const float* o, const float* s, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + o[i] + s[i];
}
#define TILE 32
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    if (blockDim.x != TILE) __trap();           // written for 32-wide tiles, as most tiled kernels are
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""
TOKENS, HIDDEN, FF = 128, 512, 2048


def setup(ctx):
    """Built at ctx.batch tokens (default TOKENS) for `graphscope plan examples/decoder_step.py --sizes 1-256`:
    weights and buffers once, at the largest size, and views of them at each size."""
    cp = ctx.cupy
    tokens = ctx.batch or TOKENS
    if not hasattr(ctx, "_decoder"):
        top = ctx.max_batch or tokens
        rng = cp.random.default_rng(3)
        ctx._decoder = {
            "x": rng.standard_normal((top, HIDDEN), dtype=cp.float32),
            "w1": rng.standard_normal((HIDDEN, FF), dtype=cp.float32) * HIDDEN**-0.5,  # Python floats keep float32
            "w2": rng.standard_normal((FF, HIDDEN), dtype=cp.float32) * FF**-0.5,
            "ws": rng.standard_normal((HIDDEN, HIDDEN), dtype=cp.float32) * HIDDEN**-0.5,
            "rows": [cp.empty((top, HIDDEN), cp.float32) for _ in range(4)],
            "wide": [cp.empty((top, FF), cp.float32) for _ in range(2)],
            "yt": cp.empty(HIDDEN * top, cp.float32),
        }
    d = ctx._decoder
    ln, gelu, gemm2d, residual, transpose = (
        ctx.kernel(SOURCE, name) for name in ("layernorm", "gelu", "gemm2d", "residual", "transpose")
    )
    x, w1, w2, ws = d["x"][:tokens], d["w1"], d["w2"], d["ws"]
    gamma, beta = cp.ones(HIDDEN, cp.float32), cp.zeros(HIDDEN, cp.float32)
    h, o, s, y = (buffer[:tokens] for buffer in d["rows"])
    u, v = (buffer[:tokens] for buffer in d["wide"])
    yt = d["yt"][: HIDDEN * tokens].reshape(HIDDEN, tokens)
    side = ctx.new_stream()
    fork, join = cp.cuda.Event(disable_timing=True), cp.cuda.Event(disable_timing=True)
    ctx.outputs(y=y, yt=yt)
    n = tokens * HIDDEN

    def step(ctx):
        fork.record(ctx.stream)
        side.wait_event(fork)
        ctx.launch(
            gemm2d,
            problem=(HIDDEN, tokens),
            block=(16, 16),
            name="side_gemm",
            stream=side,
            args=(x, ws, s, np.int32(tokens), np.int32(HIDDEN), np.int32(HIDDEN)),
        )
        join.record(side)
        ctx.launch(
            ln,
            problem=tokens,
            block=256,
            name="layernorm",
            grid=lambda problem, block: (problem[0],),
            shared_mem=lambda block: 2 * block[0] * 4,
            args=(x, h, gamma, beta, np.int32(HIDDEN)),
        )
        ctx.matmul(h, w1, out=u)
        ctx.launch(gelu, problem=tokens * FF, block=256, name="gelu", args=(u, v, np.int32(tokens * FF)))
        ctx.matmul(v, w2, out=o)
        ctx.stream.wait_event(join)
        ctx.launch(residual, problem=n, block=256, name="residual", args=(x, o, s, y, np.int32(n)))
        ctx.launch(
            transpose,
            problem=(HIDDEN, tokens),
            block=(32, 8),
            name="transpose",
            grid=lambda problem, block: (-(-problem[0] // 32), -(-problem[1] // 32)),
            args=(y, yt, np.int32(tokens), np.int32(HIDDEN)),
        )

    return step
