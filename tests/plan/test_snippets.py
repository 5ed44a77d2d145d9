"""The chosen sizes as each engine's configuration, parsed back the way the engine would read it."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml

from graphscope.plan.snippets import ENGINES, engine_snippet

SIZES = [8, 1, 2, 4, 48, 16]


def test_vllm_gets_its_compilation_config_json():
    words = shlex.split(engine_snippet("vLLM", SIZES))
    config = json.loads(words[words.index("--compilation-config") + 1])
    assert config == {"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 48]}
    assert words[words.index("--max-num-seqs") + 1] == "48"


def test_sglang_gets_its_batch_size_list():
    words = shlex.split(engine_snippet("SGLang", SIZES))
    at = words.index("--cuda-graph-bs") + 1
    assert words[at : at + 6] == ["1", "2", "4", "8", "16", "48"]
    assert words[words.index("--cuda-graph-max-bs") + 1] == "48"


def test_tensorrt_llm_gets_yaml_with_padding_on():
    assert yaml.safe_load(engine_snippet("TensorRT-LLM", SIZES)) == {
        "cuda_graph_config": {"enable_padding": True, "batch_sizes": [1, 2, 4, 8, 16, 48]}
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_no_sizes_means_no_graphs(engine):
    assert "no graphs" in engine_snippet(engine, [])


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown engine"):
        engine_snippet("llama.cpp", [1])
