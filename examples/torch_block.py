"""A PyTorch transformer block: the step is plain torch code (an nn.Module forward).

`graphscope run` uses a batch of 4 sequences; `graphscope plan examples/torch_block.py --sizes 1-256`
builds it at each batch size (ctx.batch) with one set of weights, and chooses the sizes to capture.

graphscope runs it eagerly and as a torch.cuda.CUDAGraph (warm-up on a side stream, one memory pool,
as PyTorch documents), compares the outputs, and reads the captured graph's DAG from its raw handle:
cuBLAS and PyTorch kernels, shown but not tunable (library kernels assume their launch configuration).
Needs PyTorch with CUDA (pip install -e ".[torch]").
"""

FRAMEWORK = "torch"
BATCH, TOKENS, HIDDEN, HEADS = 4, 64, 512, 8


def setup(ctx):
    torch = ctx.torch
    batch = ctx.batch or BATCH
    if not hasattr(ctx, "_block"):  # one model for every batch size, as a server holds one
        ctx._block = build(torch).to(ctx.device).eval()
    block = ctx._block
    generator = torch.Generator(device=ctx.device).manual_seed(0)
    x = torch.randn(batch, TOKENS, HIDDEN, device=ctx.device, generator=generator)
    out = torch.empty_like(x)
    ctx.outputs(out=out)

    @torch.no_grad()
    def step(ctx):
        out.copy_(block(x))  # results go into a tensor that outlives the step (graph replays need that)

    return step


def build(torch):
    """Pre-norm attention and MLP with residuals, seeded weights."""
    nn, functional = torch.nn, torch.nn.functional

    class Block(nn.Module):
        """Pre-norm attention and MLP with residuals."""

        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.up, self.down = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)

        def forward(self, x):
            batch = x.shape[0]
            q, k, v = self.qkv(self.norm1(x)).view(batch, TOKENS, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
            attention = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(attention.transpose(1, 2).reshape(batch, TOKENS, HIDDEN))
            return x + self.down(functional.gelu(self.up(self.norm2(x))))

    torch.manual_seed(0)
    return Block()
