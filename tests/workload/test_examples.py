"""The shipped examples are real workloads: they load, declare setup(ctx), and (on a GPU) run in
both modes with matching outputs (tests/gpu)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from graphscope.workload.child.live import load_module

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_a_workload(path):
    module = load_module(path)
    assert list(inspect.signature(module.setup).parameters) == ["ctx"]
    assert module.__doc__ and len(module.__doc__.split()) > 10


def test_the_promised_examples_ship():
    names = {"seed_vecadd", "forkjoin", "transformer_step", "decoder_step", "torch_block", "batched_mlp"}
    names |= {"request_pipeline", "triton_mlp", "hf_decode"}
    names |= {"pdl_chain"}  # issue 47
    names |= {"while_decode"}  # a WHILE conditional node (ctx.while_loop)
    assert {p.stem for p in EXAMPLES} == names
    assert load_module(EXAMPLES[[p.stem for p in EXAMPLES].index("torch_block")]).FRAMEWORK == "torch"


def test_a_torch_workload_without_torch_names_what_to_install(tmp_path):
    """Where PyTorch is missing (this CPU machine), the child says what to install; nothing is stored."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("numpy")
    try:
        import torch  # noqa: F401

        pytest.skip("PyTorch is installed here")
    except ImportError:
        pass
    path = next(p for p in EXAMPLES if p.stem == "torch_block")
    env = {**os.environ, "GRAPHSCOPE_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "graphscope", "run", str(path), "--json", "--reps", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 2 and "pip install -e '.[torch]'" in result.stderr
    assert json.loads(result.stdout)["error"]["kind"] == "missing_library"
