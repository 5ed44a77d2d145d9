"""First steps that read right (issue 44): `summary ''` refuses in one line, a GPU without a name reads
"device 0: busy", the no-GPU hint gives the install command that works from a checkout."""

from __future__ import annotations

import pytest

from graphscope.cli import main
from tests.conftest import FORKJOIN


def test_summary_of_an_empty_name_refuses_in_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a folder a rank job would otherwise be run over
    assert main(["summary", ""]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "empty file name" in captured.err


def test_a_gpu_without_a_name_reads_device_colon(capsys):
    from graphscope.analysis.summary import summarize
    from graphscope.text.summary import render_summary
    from graphscope.trace import load_trace

    summary = summarize(load_trace(FORKJOIN))
    summary["gpu"][0]["name"] = None
    text = render_summary(summary)
    assert "  device 0: busy" in text and "device 0 :" not in text
    summary["gpu"][0]["name"] = "NVIDIA H200"
    assert "  device 0 NVIDIA H200: busy" in render_summary(summary)


def test_the_no_gpu_hint_installs_from_the_checkout():
    from graphscope.core.errors import NoGpuError
    from graphscope.workload.session import raise_for

    with pytest.raises(NoGpuError) as caught:
        raise_for({"kind": "no_gpu", "message": "no CUDA GPU is available"})
    assert 'pip install -e ".[cuda13]"' in str(caught.value)
    assert "graphscope[cuda12]" not in str(caught.value)  # that name on PyPI is another program
