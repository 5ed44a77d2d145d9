"""A PyTorch decoder-ish step (layer norm, three projections through cuBLAS, a softmax mix, an MLP) with
four slots where one fault can be seeded by a switch (benchmarks/diverge_faults.py).

Every slot k runs the same small ops on the hidden state h (T x H): a marker fill (tags the slot's start
in the graph: the k-th FillFunctor kernel), `h + r_k` (a request tensor), `* g_k`, `torch.roll` by p_k,
and rows [:n] of it written into a fresh tensor. `reset(ctx)` is a request arriving; the step consumes
the request's host values, so the capture `graphscope run` takes between requests sees dummies.
GRAPHSCOPE_FAULT="KIND:SLOT":

- stale:  r_k is re-allocated per request (the old one zeroed and kept): the graph reads the old one.
- scalar: g_k is the request's (0.5), popped by the step; at capture the default 1.0.
- grid:   n is the request's row count (T), popped; at capture a dummy 1, so the slice's kernel
          covers one row.
- host:   p_k is read from a host array (a decode position) each step advances and each request resets.
"""

import os

import numpy as np

FRAMEWORK = "torch"
T, H, FF, SLOTS = 16, 256, 1024, 4
FAULT = os.environ.get("GRAPHSCOPE_FAULT", "none")
KIND, _, AT = FAULT.partition(":")
AT = int(AT) if AT else -1
OPS = ("fill", "add", "mul", "roll", "rows")
FAULT_OP = {"stale": "add", "scalar": "mul", "host": "roll", "grid": "rows"}
"""The op of a slot each fault sits in: the node the search should name is that op's kernel."""


def setup(ctx):
    torch = ctx.torch
    gen = torch.Generator(device="cuda").manual_seed(5)

    def rand(*shape, scale=1.0):
        return torch.randn(*shape, device="cuda", generator=gen) * scale

    wq, wk, wv = (rand(H, H, scale=H**-0.5) for _ in range(3))
    w1, w2 = rand(H, FF, scale=H**-0.5), rand(FF, H, scale=FF**-0.5)
    x = rand(T, H)
    requests = [rand(T, H, scale=0.1) for _ in range(SLOTS)]
    marks = torch.zeros(SLOTS, device="cuda")
    out = torch.empty(T, H, device="cuda")
    state = {"r": requests[AT] if KIND == "stale" else None, "kept": [], "host": np.zeros(1, np.int64)}
    ctx._faults = state
    ctx.outputs(out=out)

    def slot(h, k):
        r, g, p, n = requests[k], 0.5, k + 1, T
        if k == AT:
            if KIND == "stale":
                r = state["r"]
            elif KIND == "scalar":
                g = state.pop("g", 1.0)
            elif KIND == "grid":
                n = state.pop("n", 1)
            elif KIND == "host":
                p = int(state["host"][0])
        marks[k].fill_(float(k + 1))  # never 0: a zero fill may become a memset
        h = h + r
        h = h * g
        h = torch.roll(h, shifts=p, dims=1)
        rows = h.clone()
        rows[:n] = h[:n] * 1.5
        return rows

    def step(ctx):
        h = slot(x, 0)
        h = torch.nn.functional.layer_norm(h, (H,))
        q, k_, v = h @ wq, h @ wk, h @ wv
        h = slot(q, 1)
        mix = torch.softmax(h @ k_.T / H**0.5, dim=-1) @ v
        h = slot(mix, 2)
        h = torch.nn.functional.gelu(h @ w1) @ w2
        h = slot(h, 3)
        out.copy_(h)
        state["host"][0] += 1

    return step


def reset(ctx):
    state = ctx._faults
    state["g"], state["n"] = 0.5, T
    state["host"][0] = AT + 1
    if KIND == "stale":
        old = state["r"]
        fresh = (state["kept"][0] if state["kept"] else old).clone()
        if not state["kept"]:
            state["kept"].append(old.clone())
        old.zero_()
        state["kept"].append(old)
        state["r"] = fresh
