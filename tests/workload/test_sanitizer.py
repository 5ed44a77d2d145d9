"""compute-sanitizer's verdict on a candidate: its first finding, or nothing; a missing tool is one line."""

import types

import pytest

from graphscope.core.launch_config import LaunchConfig
from graphscope.tune.controller import TuningController
from graphscope.workload import sanitizer
from graphscope.workload.sanitizer import first_finding

INITCHECK = """========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at reduce_tile+0x1d0 in /tmp/kernel.cu:12
=========     by thread (95,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 96 errors
"""
RACECHECK = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at reduce_tile+0x120
=========     and Read access at reduce_tile+0x1a0 [16 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
CLEAN = """========= COMPUTE-SANITIZER
========= Warning: something the tool notes in passing
========= ERROR SUMMARY: 0 errors
"""


def test_the_first_finding_is_the_tools_own_words():
    assert first_finding(INITCHECK) == "Uninitialized __global__ memory read of size 4 bytes"
    assert first_finding(RACECHECK).startswith("Error: Race reported between Write access")
    assert first_finding(CLEAN) is None and first_finding("") is None


def test_without_compute_sanitizer_tuning_goes_on_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr("graphscope.core.settings.find_sanitizer", lambda: None)
    controller = TuningController(tmp_path / "w.py", LaunchConfig(), verify="sanitizer")
    assert not controller.sanitize and "compute-sanitizer was not found" in controller.verify_note
    assert "\n" not in controller.verify_note
    with pytest.raises(FileNotFoundError, match="tuning goes on"):
        sanitizer.sanitize(tmp_path / "w.py", LaunchConfig())


def test_a_finding_turns_an_ok_trial_into_a_sanitizer_trial_that_cannot_win(monkeypatch, tmp_path):
    from graphscope.tune.controller import IsolatingMeasurer
    from graphscope.tune.measure import Trial

    monkeypatch.setattr("graphscope.core.settings.find_sanitizer", lambda: "/usr/bin/true")
    controller = TuningController(tmp_path / "w.py", LaunchConfig(), verify="sanitizer")
    calls = []

    def fake_sanitize(workload, config):
        calls.append(config.blocks)
        bad = config.blocks.get("reduce") == (96, 1, 1)
        return {"clean": not bad, "finding": "initcheck: Uninitialized __global__ memory read" if bad else None,
                "errors": [], "seconds": 1.0}  # fmt: skip

    monkeypatch.setattr(sanitizer, "sanitize", fake_sanitize)
    controller.session = ScrubSession(lambda: {"checked": True, "match": True})
    controller.live = types.SimpleNamespace(timeout=None)
    measurer = IsolatingMeasurer(controller)
    for block in ((96, 1, 1), (128, 1, 1), (96, 1, 1)):
        config = LaunchConfig(blocks={"reduce": block})
        trial = Trial(config, "in-place", [1000.0] * 10)
        monkeypatch.setattr(measurer, "_guarded", lambda work, config, how, trial=trial: trial)
        measured = measurer.measure(config, 10)
        assert measured.usable == (block != (96, 1, 1))
        if block == (96, 1, 1):
            assert measured.status == "sanitizer" and measured.reason.startswith("initcheck: Uninitialized")
    assert len(calls) == 2  # each config checked once


class ScrubSession:
    """Answers the child's `scrubbed` request (one replay after shared memory was filled with NaN)."""

    def __init__(self, answer):
        self.answer, self.asked = answer, 0

    def request(self, command, timeout=None, **fields):
        assert command == "scrubbed"
        self.asked += 1
        return self.answer()


@pytest.mark.parametrize(
    ("scrubbed", "outputs_match", "caught"),
    [
        ({"checked": True, "match": None, "nonfinite": ["out"]}, True, True),  # NaN read from the scrub
        ({"checked": True, "match": False, "max_abs_diff": 64.0}, True, True),
        ({"checked": True, "match": None, "nonfinite": ["out"]}, None, False),  # NaN in its outputs anyway
        ({"checked": True, "match": True}, True, False),
    ],
)
def test_a_kernel_that_reads_shared_memory_it_never_wrote_is_caught_by_the_scrub(
    monkeypatch, tmp_path, scrubbed, outputs_match, caught
):
    """compute-sanitizer passes it (initcheck tracks global memory only): the NaN-filled replay does not."""
    from graphscope.tune.controller import IsolatingMeasurer
    from graphscope.tune.measure import Trial

    monkeypatch.setattr("graphscope.core.settings.find_sanitizer", lambda: "/usr/bin/true")
    ran_tools = []
    monkeypatch.setattr(
        sanitizer, "sanitize", lambda w, c: ran_tools.append(c) or {"clean": True, "finding": None, "errors": []}
    )
    controller = TuningController(tmp_path / "w.py", LaunchConfig(), verify="sanitizer")
    controller.session = session = ScrubSession(lambda: scrubbed)
    controller.live = types.SimpleNamespace(timeout=None)
    measurer = IsolatingMeasurer(controller)
    config = LaunchConfig(blocks={"tile_sum": (384, 1, 1)})
    trial = Trial(config, "in-place", [1000.0] * 10, outputs_match)
    monkeypatch.setattr(measurer, "_guarded", lambda work, config, how: trial)
    measured = measurer.measure(config, 10)
    assert session.asked == 1 and (measured.status == "sanitizer") == caught
    if caught:
        assert measured.reason.startswith("shared-memory scrub:") and "never wrote" in measured.reason
        assert ran_tools == []  # the scrub's finding is enough: the three tools are not run
    else:
        assert ran_tools == [config]
