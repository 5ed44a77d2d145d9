"""A decode-like loop on the device: a WHILE conditional node (`ctx.while_loop`) runs the body until a stop.

    prefill                       h <- the prompt's state
    while flag and step < 64:     ctx.while_loop(body, flag, max_iterations=MAX_STEPS)
        mix    h <- 0.5 h + sin(i + pos)          (one thread per element)
        scale  h <- h / (1 + |h|)
        pick   token <- f(h[pos]); pos += 1; flag <- token != STOP and pos < LENGTH   (one thread)
    finish                        out <- h * tokens so far

As a graph the whole loop is one launch: graphscope's condition kernels set the WHILE node's condition from
`flag` (cudaGraphSetConditional) and count the iterations. Eagerly the same loop runs on the host, reading
`flag` back after each iteration (one synchronisation each), which is what the graph saves. `reset` puts
the request back at its start before every measured step. Needs CuPy (pip install -e ".[cuda13]").
"""

import numpy as np

HIDDEN = 4096
LENGTH = 12  # tokens decoded per request (the loop runs LENGTH times unless STOP comes first)
MAX_STEPS = 64  # the loop's own bound
STOP = -1  # no token equals it: every request decodes LENGTH tokens

SOURCE = r"""
extern "C" __global__ void prefill(float* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) h[i] = cosf(0.001f * i);
}
extern "C" __global__ void mix(float* h, const int* pos, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) h[i] = 0.5f * h[i] + sinf((float)(i + pos[0]));
}
extern "C" __global__ void scale(float* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) h[i] = h[i] / (1.0f + fabsf(h[i]));
}
extern "C" __global__ void pick(const float* h, int* tokens, int* pos, int* flag, int n, int stop, int length) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;   // one thread decides, whatever the block
    int p = pos[0];
    int token = (int)(fabsf(h[(p * 97) % n]) * 1000.0f) % 512;
    tokens[p] = token;
    pos[0] = p + 1;
    flag[0] = (token != stop && p + 1 < length) ? 1 : 0;
}
extern "C" __global__ void finish(const float* h, const int* tokens, float* out, int n, int length) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = h[i] * (float)tokens[i % length];
}
"""


def setup(ctx):
    cp = ctx.cupy
    prefill = ctx.kernel(SOURCE, "prefill")
    mix = ctx.kernel(SOURCE, "mix")
    scale = ctx.kernel(SOURCE, "scale")
    pick = ctx.kernel(SOURCE, "pick")
    finish = ctx.kernel(SOURCE, "finish")
    h = cp.zeros(HIDDEN, dtype=cp.float32)
    out = cp.zeros(HIDDEN, dtype=cp.float32)
    tokens = cp.zeros(MAX_STEPS, dtype=cp.int32)
    pos = cp.zeros(1, dtype=cp.int32)
    flag = cp.ones(1, dtype=cp.int32)
    n = np.int32(HIDDEN)
    ctx.state = (h, tokens, pos, flag)
    ctx.outputs(out=out, tokens=tokens, pos=pos)

    def body(ctx):
        ctx.launch(mix, problem=HIDDEN, args=(h, pos, n), name="mix")
        ctx.launch(scale, problem=HIDDEN, args=(h, n), name="scale")
        ctx.launch(
            pick, problem=1, block=1, args=(h, tokens, pos, flag, n, np.int32(STOP), np.int32(LENGTH)), name="pick"
        )

    def step(ctx):
        ctx.launch(prefill, problem=HIDDEN, args=(h, n), name="prefill")
        ctx.while_loop(body, flag, max_iterations=MAX_STEPS, name="decode")
        ctx.launch(finish, problem=HIDDEN, args=(h, tokens, out, n, np.int32(LENGTH)), name="finish")

    return step


def reset(ctx):
    """Back to the start of the request: no tokens, position 0, the loop's flag up."""
    _, tokens, pos, flag = ctx.state
    tokens.fill(0)
    pos.fill(0)
    flag.fill(1)
