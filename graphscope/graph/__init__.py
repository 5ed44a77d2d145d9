"""The CUDA-graph DAG model: from a live captured graph (cuda.bindings, lazily) and from a trace."""
