"""The shipped examples are real workloads: they load, declare setup(ctx), and (on a GPU) run in
both modes with matching outputs (tests/gpu)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from graphscope.workload.live import load_module

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_a_workload(path):
    module = load_module(path)
    assert list(inspect.signature(module.setup).parameters) == ["ctx"]
    assert module.__doc__ and len(module.__doc__.split()) > 10


def test_the_three_promised_examples_ship():
    assert {p.stem for p in EXAMPLES} == {"seed_vecadd", "forkjoin", "transformer_step"}
