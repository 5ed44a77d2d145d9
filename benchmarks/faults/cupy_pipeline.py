"""A CuPy pipeline of eight kernels with one fault seeded by a switch (benchmarks/diverge_faults.py).

Each stage s runs its own kernel `stage{s}` (unique names: the node a fault sits in is known without
asking graphscope): y[i] = gain * tanh(x[(i + shift) % n]) + bias[i] over ROWS x COLS floats, launched
through ctx.launch. Between stages 3 and 4 a plain CuPy elementwise kernel halves the buffer (a kernel
node no ctx.launch site accounts for).

`reset(ctx)` is a request arriving: it sets the request's host values. The step consumes them, so a
capture taken between requests (as `graphscope run` captures, right after its eager steps) sees what a
capture on dummy data sees. GRAPHSCOPE_FAULT="KIND:STAGE" seeds one fault at STAGE:

- stale:  the stage's bias is re-allocated for every request; the old one is zeroed and kept (memory
          reused by someone else): the graph keeps reading the buffer it was captured with.
- scalar: the stage's gain is a request value (0.75) the step pops; at capture the default (1.0).
- grid:   the stage's rows come from the request; at capture a dummy of 1 row, so the captured grid
          covers one row while the kernel's n still names them all.
- host:   the stage's shift is read from a host array (a decode position) that each step advances and
          each request resets: the capture reads the advanced value.
"""

import os

import numpy as np

SOURCE = r"""
extern "C" __global__ void NAME(const float* x, const float* bias, float* y, float gain, int shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gain * tanhf(x[(i + shift) % n]) + bias[i];
}
"""
ROWS, COLS, STAGES = 64, 1024, 8
N = ROWS * COLS
FAULT = os.environ.get("GRAPHSCOPE_FAULT", "none")
KIND, _, AT = FAULT.partition(":")
AT = int(AT) if AT else -1


def setup(ctx):
    cp = ctx.cupy
    rng = cp.random.default_rng(7)
    kernels = [ctx.kernel(SOURCE.replace("NAME", f"stage{s}"), f"stage{s}") for s in range(STAGES)]
    x = rng.standard_normal(N, dtype=cp.float32)
    bufs = [cp.empty(N, cp.float32) for _ in range(STAGES)]
    biases = [rng.standard_normal(N, dtype=cp.float32) * 0.1 for _ in range(STAGES)]
    state = {"bias": biases[AT] if KIND == "stale" else None, "kept": [], "host": np.zeros(1, np.int32)}
    ctx._faults = state
    ctx.outputs(y=bufs[-1])

    def stage_values(s):
        bias, gain, shift, rows = biases[s], 0.75, s + 1, ROWS
        if s == AT:
            if KIND == "stale":
                bias = state["bias"]
            elif KIND == "scalar":
                gain = state.pop("gain", 1.0)
            elif KIND == "grid":
                rows = state.pop("rows", 1)
            elif KIND == "host":
                shift = int(state["host"][0])
        return bias, gain, shift, rows

    def step(ctx):
        src = x
        for s in range(STAGES):
            bias, gain, shift, rows = stage_values(s)
            ctx.launch(
                kernels[s],
                problem=rows * COLS,
                block=256,
                name=f"stage{s}",
                args=(src, bias, bufs[s], np.float32(gain), np.int32(shift), np.int32(N)),
            )
            if s == 3:
                cp.multiply(bufs[s], 0.5, out=bufs[s])
            src = bufs[s]
        state["host"][0] += 1  # the decode position advances with every step

    return step


def reset(ctx):
    """A request arrives: its values, and for a stale-pointer fault a freshly allocated bias."""
    cp = ctx.cupy
    state = ctx._faults
    state["gain"], state["rows"] = 0.75, ROWS
    state["host"][0] = AT + 1
    if KIND == "stale":
        old = state["bias"]
        fresh = cp.empty_like(old)
        fresh[...] = old if not state["kept"] else state["kept"][0]
        if not state["kept"]:
            state["kept"].append(old.copy())  # the request's data, kept to fill every fresh buffer
        old.fill(0)  # the released buffer, reused by someone else
        state["kept"].append(old)
        state["bias"] = fresh
