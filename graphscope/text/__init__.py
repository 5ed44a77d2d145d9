"""The readable form of every answer: plain text a terminal shows and the panels reuse, one module per
answer (summary, anatomy, run, tune, plan, ranks). Dicts in, lines out; nothing here reads a trace."""
