"""Programmatic dependent launch (PDL): a chain of 32 short kernels, each launched with `pdl=True`.

With PDL a kernel may start while the one before it on the stream is still running; it must not read
that kernel's output before `griddepcontrol.wait` returns, and the kernel before it lets it start early
with `griddepcontrol.launch_dependents`. The first 24 launches (`link`) form a data chain and use both;
the last 8 (`loose`) use neither: each works on a buffer of its own, so starting early is safe, but
nothing in their code lets them overlap (`graphscope dag` calls those edges "no device-side
wait/trigger"). Captured, every edge after the first is programmatic.

    graphscope run examples/pdl_chain.py          # eager and graph, outputs compared
    graphscope dag examples/pdl_chain.py          # the programmatic edges, their ports
    graphscope tune examples/pdl_chain.py --pdl   # each edge made plain in turn, and re-measured

Only one kernel before each `link` launch writes what it reads: PDL's wait covers the kernel just before
on the stream, not the ones before that (a kernel launched early can finish before its predecessor).
"""

import numpy as np

SOURCE = r"""
extern "C" __global__ void link(const float* x, float* y, int n) {
    asm volatile("griddepcontrol.wait;" ::: "memory");  // x is written by the kernel before this one
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.0f;
    asm volatile("griddepcontrol.launch_dependents;");  // the next kernel may start
}
extern "C" __global__ void loose(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f - 1.0f;
}
"""
N = 1 << 12
LINKS, LOOSE = 24, 8


def setup(ctx):
    cp = ctx.cupy
    link = ctx.kernel(SOURCE, "link")
    loose = ctx.kernel(SOURCE, "loose")
    chain = [cp.random.rand(N, dtype=cp.float32) for _ in range(LINKS + 1)]
    inputs = [cp.random.rand(N, dtype=cp.float32) for _ in range(LOOSE)]
    outputs = [cp.empty_like(a) for a in inputs]
    n = np.int32(N)
    ctx.outputs(chain=chain[-1], **{f"loose{i}": out for i, out in enumerate(outputs)})

    def step(ctx):
        for i in range(LINKS):
            ctx.launch(link, problem=N, args=(chain[i], chain[i + 1], n), name="link", pdl=True)
        for x, y in zip(inputs, outputs):
            ctx.launch(loose, problem=N, args=(x, y, n), name="loose", pdl=True)

    return step
