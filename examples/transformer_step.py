"""A transformer-like inference step: 3 layers of layer norm, QKV projection, attention, MLP and
residuals on a short sequence: 46 small kernels per step (three of them plain CuPy operations, which are
measured but not tunable). Small shapes make it launch-bound, as decode steps often are.
"""

import numpy as np

SOURCE = r"""
extern "C" __global__ void layernorm(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + r * cols;
    float mean = 0.f, var = 0.f;
    for (int j = 0; j < cols; j++) mean += row[j];
    mean /= cols;
    for (int j = 0; j < cols; j++) { float d = row[j] - mean; var += d * d; }
    float inv = rsqrtf(var / cols + 1e-5f);
    for (int j = 0; j < cols; j++) y[r * cols + j] = (row[j] - mean) * inv;
}
// c[M,N] = a[M,K] @ b[K,N]; one thread per output element
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int M, int N, int K) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= M * N) return;
    int i = idx / N, j = idx % N;
    float s = 0.f;
    for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
    c[idx] = s;
}
// c[M,N] = a[M,K] @ b[N,K]^T (attention scores)
extern "C" __global__ void matmul_bt(const float* a, const float* b, float* c, int M, int N, int K) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= M * N) return;
    int i = idx / N, j = idx % N;
    float s = 0.f;
    for (int k = 0; k < K; k++) s += a[i * K + k] * b[j * K + k];
    c[idx] = s;
}
extern "C" __global__ void softmax_rows(float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float* row = x + r * cols;
    float m = row[0];
    for (int j = 1; j < cols; j++) m = fmaxf(m, row[j]);
    float s = 0.f;
    for (int j = 0; j < cols; j++) { row[j] = __expf(row[j] - m); s += row[j]; }
    for (int j = 0; j < cols; j++) row[j] /= s;
}
extern "C" __global__ void gelu(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; x[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }
}
extern "C" __global__ void add_into(float* acc, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += x[i];
}
extern "C" __global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""
LAYERS, SEQ, DIM, HIDDEN = 3, 16, 128, 512


def setup(ctx):
    cp = ctx.cupy
    k = {
        name: ctx.kernel(SOURCE, name)
        for name in ("layernorm", "matmul", "matmul_bt", "softmax_rows", "gelu", "add_into", "copy")
    }
    rng = cp.random.default_rng(0)
    weight = lambda *shape: (rng.standard_normal(shape, dtype=cp.float32) / np.sqrt(shape[0])).astype(cp.float32)  # noqa: E731
    layers = [
        dict(
            wq=weight(DIM, DIM),
            wk=weight(DIM, DIM),
            wv=weight(DIM, DIM),
            wo=weight(DIM, DIM),
            w1=weight(DIM, HIDDEN),
            w2=weight(HIDDEN, DIM),
        )
        for _ in range(LAYERS)
    ]
    x_in = rng.standard_normal((SEQ, DIM), dtype=cp.float32)
    h, n, q, kk, v, att, ctx_out, o, up = (
        cp.empty(shape, cp.float32)
        for shape in (
            (SEQ, DIM),
            (SEQ, DIM),
            (SEQ, DIM),
            (SEQ, DIM),
            (SEQ, DIM),
            (SEQ, SEQ),
            (SEQ, DIM),
            (SEQ, DIM),
            (SEQ, HIDDEN),
        )
    )
    scale = cp.float32(1.0 / np.sqrt(DIM))
    ctx.outputs(h=h)
    i32 = np.int32

    def mm(a, b, c, m, nn, kdim, name):
        ctx.launch(k["matmul"], problem=m * nn, block=128, args=(a, b, c, i32(m), i32(nn), i32(kdim)), name=name)

    def step(ctx):
        ctx.launch(k["copy"], problem=SEQ * DIM, args=(x_in, h, i32(SEQ * DIM)), name="embed")
        for w in layers:
            ctx.launch(k["layernorm"], problem=SEQ, block=32, args=(h, n, i32(SEQ), i32(DIM)), name="ln1")
            mm(n, w["wq"], q, SEQ, DIM, DIM, "q_proj")
            mm(n, w["wk"], kk, SEQ, DIM, DIM, "k_proj")
            mm(n, w["wv"], v, SEQ, DIM, DIM, "v_proj")
            ctx.launch(
                k["matmul_bt"],
                problem=SEQ * SEQ,
                block=64,
                args=(q, kk, att, i32(SEQ), i32(SEQ), i32(DIM)),
                name="scores",
            )
            cp.multiply(att, scale, out=att)  # a plain CuPy kernel: measured, not tunable
            ctx.launch(k["softmax_rows"], problem=SEQ, block=32, args=(att, i32(SEQ), i32(SEQ)), name="softmax")
            mm(att, v, ctx_out, SEQ, DIM, SEQ, "attend")
            mm(ctx_out, w["wo"], o, SEQ, DIM, DIM, "o_proj")
            ctx.launch(k["add_into"], problem=SEQ * DIM, args=(h, o, i32(SEQ * DIM)), name="residual1")
            ctx.launch(k["layernorm"], problem=SEQ, block=32, args=(h, n, i32(SEQ), i32(DIM)), name="ln2")
            mm(n, w["w1"], up, SEQ, HIDDEN, DIM, "mlp_up")
            ctx.launch(k["gelu"], problem=SEQ * HIDDEN, args=(up, i32(SEQ * HIDDEN)), name="gelu")
            mm(up, w["w2"], o, SEQ, DIM, HIDDEN, "mlp_down")
            ctx.launch(k["add_into"], problem=SEQ * DIM, args=(h, o, i32(SEQ * DIM)), name="residual2")

    return step
