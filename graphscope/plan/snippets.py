"""A chosen set of capture sizes written as an inference engine takes it.

- vLLM: `compilation_config.cudagraph_capture_sizes` (the `--compilation-config` JSON of `vllm serve`);
- SGLang: `--cuda-graph-bs 1 2 4 ...` (with `--cuda-graph-max-bs`, the largest);
- TensorRT-LLM: `cuda_graph_config: {batch_sizes, enable_padding}` in the LLM API's YAML options
  (`CudaGraphConfig(batch_sizes=[...], enable_padding=True)` in Python): padding on, as the plan assumes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

ENGINES = ("vLLM", "SGLang", "TensorRT-LLM")


def engine_snippet(engine: str, sizes: Sequence[int]) -> str:
    """The configuration text that makes `engine` capture exactly `sizes`."""
    chosen = sorted({int(s) for s in sizes})
    if not chosen:
        return {
            "vLLM": "# capture no graphs: vllm serve MODEL --enforce-eager",
            "SGLang": "# capture no graphs: python -m sglang.launch_server --disable-cuda-graph",
            "TensorRT-LLM": "# capture no graphs: leave cuda_graph_config out",
        }[engine]
    listed = " ".join(map(str, chosen))
    if engine == "vLLM":
        config = json.dumps({"cudagraph_capture_sizes": chosen})
        return f"vllm serve MODEL --max-num-seqs {chosen[-1]} --compilation-config '{config}'"
    if engine == "SGLang":
        launch = "python -m sglang.launch_server --model-path MODEL"
        return f"{launch} --cuda-graph-bs {listed} --cuda-graph-max-bs {chosen[-1]}"
    if engine == "TensorRT-LLM":
        return f"cuda_graph_config:\n  enable_padding: true\n  batch_sizes: [{', '.join(map(str, chosen))}]"
    raise ValueError(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")
