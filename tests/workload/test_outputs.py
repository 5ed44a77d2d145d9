"""How eager, graph and tuned outputs are compared: dtype tolerances, NaN/Inf, and which check comes first."""

from __future__ import annotations

import numpy as np

from graphscope.workload.child.live import compare_outputs
from tests.workload.fakes import fake_report


def test_nan_in_both_modes_cannot_vouch_for_anything():
    nan = np.array([1.0, np.nan], dtype=np.float32)
    result = compare_outputs({"y": nan}, {"y": nan.copy()})
    assert result["match"] is None and result["nonfinite"] == ["y"] and "cannot vouch" in result["note"]


def test_tolerances_follow_the_dtype():
    ref = np.ones(4, dtype=np.float16)
    assert compare_outputs({"y": ref}, {"y": ref + np.float16(5e-4)})["match"] is True  # within fp16's 1e-3
    ref32 = np.ones(4, dtype=np.float32)
    assert compare_outputs({"y": ref32}, {"y": ref32 + np.float32(5e-4)})["match"] is False  # not within fp32's
    bf16 = {"y": "bfloat16"}  # compared as float32 copies, judged by their own dtype
    assert compare_outputs({"y": ref32}, {"y": ref32 + np.float32(5e-3)}, bf16)["match"] is True
    ints = np.arange(4)
    assert compare_outputs({"k": ints}, {"k": ints + 1})["match"] is False


def test_the_worst_output_is_named():
    a, b = np.zeros(3, np.float32), np.zeros(3, np.float32)
    result = compare_outputs({"a": a, "b": b}, {"a": a + 1e-9, "b": b + 2.0})
    assert result["match"] is False and result["worst"] == "b" and result["max_abs_diff"] == 2.0


def test_an_eager_step_that_drifts_is_named_before_the_graph_is_blamed(tmp_path):
    verdict = fake_report(tmp_path / "w.py", match=False, eager_match=False).verdict()
    assert verdict.startswith("the eager step's outputs change from one run to the next")
    assert "reset(ctx)" in verdict  # the way out is named


def test_nan_outputs_never_let_the_graph_pay(tmp_path):
    nan = {"checked": True, "match": None, "exact": True, "nonfinite": ["logits"], "max_abs_diff": 0.0}
    verdict = fake_report(tmp_path / "w.py", outputs=nan).verdict()
    assert verdict.startswith("the outputs contain NaN or Inf (logits)") and "pays" not in verdict
