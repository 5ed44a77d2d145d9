"""An MLP with a Triton kernel between its two GEMMs: bias and GELU fused in one @triton.jit kernel,
JIT-compiled on the first (reference) step, captured with the cuBLAS GEMMs into one PyTorch graph.

The Triton kernel is a user kernel, named as such in the DAG, but not tuned in place: its block is
compiled into it (num_warps and BLOCK), so a changed launch shape would run the same code on the wrong
threads; it is tuned through triton.autotune instead. Needs PyTorch with CUDA (Triton comes with it).
"""

FRAMEWORK = "torch"
BATCH, HIDDEN = 32, 1024
BLOCK = 1024

try:  # loads without Triton (a CPU machine lists the examples); setup then says what to install
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:

    @triton.jit
    def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        v = tl.load(x_ptr + offsets, mask=inside) + tl.load(bias_ptr + offsets % cols, mask=inside)
        inner = 0.7978845608 * (v + 0.044715 * v * v * v)
        tanh = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
        tl.store(out_ptr + offsets, 0.5 * v * (1.0 + tanh), mask=inside)


def setup(ctx):
    if triton is None:  # the runner turns this into what to install
        raise ImportError("examples/triton_mlp.py needs Triton", name="triton")
    torch = ctx.torch
    generator = torch.Generator(device=ctx.device).manual_seed(0)

    def weights(*shape):
        return torch.randn(*shape, device=ctx.device, generator=generator) * 0.02

    x = torch.randn(BATCH, HIDDEN, device=ctx.device, generator=generator)
    w1, b1, w2 = weights(HIDDEN, 4 * HIDDEN), weights(4 * HIDDEN), weights(4 * HIDDEN, HIDDEN)
    h, g = torch.empty(BATCH, 4 * HIDDEN, device=ctx.device), torch.empty(BATCH, 4 * HIDDEN, device=ctx.device)
    out = torch.empty(BATCH, HIDDEN, device=ctx.device)
    ctx.outputs(out=out)
    n = BATCH * 4 * HIDDEN

    def step(ctx):
        torch.matmul(x, w1, out=h)
        bias_gelu_kernel[(triton.cdiv(n, BLOCK),)](h, b1, g, n, 4 * HIDDEN, BLOCK=BLOCK)
        torch.matmul(g, w2, out=out)

    return step
