"""One decode step of a HuggingFace transformers model: a LlamaForCausalLM built from a small LlamaConfig
(random weights, nothing downloaded), a StaticCache prefilled with a 16-token prompt, one new token
for each of 8 sequences, the logits as the output.

The step writes the new token's keys and values into the cache and advances the cache's own counters
(a StaticCache layer keeps a `cumulative_length` tensor besides its keys and values): it changes state
it reads, so `reset(ctx)` puts every tensor of the cache back to its prefilled contents before each step
(in place: the captured graph keeps the same addresses), and eager and graph are compared from the same
state. Needs transformers and PyTorch with CUDA: pip install -e ".[hf]".
"""

FRAMEWORK = "torch"
BATCH, PROMPT, CACHE = 8, 16, 64


def setup(ctx):
    torch = ctx.torch
    from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

    config = LlamaConfig(
        vocab_size=2048,
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=CACHE,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(ctx.device, torch.bfloat16).eval()
    cache = static_cache(StaticCache, config, torch.bfloat16, ctx.device)
    generator = torch.Generator(device=ctx.device).manual_seed(0)
    prompt = torch.randint(0, config.vocab_size, (BATCH, PROMPT), device=ctx.device, generator=generator)
    token = torch.randint(0, config.vocab_size, (BATCH, 1), device=ctx.device, generator=generator)
    position = torch.tensor([PROMPT], device=ctx.device)
    with torch.no_grad():
        model(input_ids=prompt, past_key_values=cache, cache_position=torch.arange(PROMPT, device=ctx.device))
    ctx._prefilled = [(t, t.clone()) for t in cache_tensors(torch, cache)]  # what reset puts back
    logits = torch.empty(BATCH, config.vocab_size, device=ctx.device, dtype=torch.bfloat16)
    ctx.outputs(logits=logits)

    @torch.no_grad()
    def step(ctx):
        out = model(input_ids=token, past_key_values=cache, cache_position=position, use_cache=True)
        logits.copy_(out.logits[:, -1])

    return step


def reset(ctx):
    """The cache as the prompt left it: keys, values and counters copied back in place."""
    for tensor, prefilled in ctx._prefilled:
        tensor.copy_(prefilled)


def static_cache(StaticCache, config, dtype, device):
    """A StaticCache for BATCH sequences of CACHE tokens, across the constructors transformers has had."""
    try:
        return StaticCache(config=config, max_batch_size=BATCH, max_cache_len=CACHE, device=device, dtype=dtype)
    except TypeError:  # transformers 5: sized and placed by the first update
        return StaticCache(config=config, max_cache_len=CACHE)


def cache_tensors(torch, cache):
    """Every tensor the cache holds: on the cache itself, in its lists and on its layer objects."""
    found, seen = [], set()

    def visit(value, depth):
        if isinstance(value, torch.Tensor):
            if id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item, depth)
        elif depth < 2 and hasattr(value, "__dict__") and type(value).__module__.startswith("transformers"):
            for item in vars(value).values():
                visit(item, depth + 1)

    visit(cache, 0)
    return found
