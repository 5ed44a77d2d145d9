def setup(ctx):
    return lambda ctx: None
