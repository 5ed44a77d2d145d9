"""Capture-size planning: which batch sizes to capture as CUDA graphs, under memory and start-up budgets."""
