"""The seeds' benchmark: 1000 launches of a tiny vector add per step (launch-bound by design).

Eagerly each launch costs the CPU microseconds while the kernel runs for about one; captured as one
CUDA graph the 1000 kernels replay back to back. Run it with `graphscope run examples/seed_vecadd.py`.
"""

import numpy as np

SOURCE = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
N = 1 << 14
LAUNCHES = 1000


def setup(ctx):
    cp = ctx.cupy
    kernel = ctx.kernel(SOURCE, "vec_add")
    a = cp.random.rand(N, dtype=cp.float32)
    b = cp.random.rand(N, dtype=cp.float32)
    c = cp.empty_like(a)
    n = np.int32(N)
    ctx.outputs(c=c)
    add = ctx.launcher(kernel, problem=N, block=256, name="add")  # bound once: no overhead per launch

    def step(ctx):
        for _ in range(LAUNCHES):
            add(a, b, c, n)

    return step
