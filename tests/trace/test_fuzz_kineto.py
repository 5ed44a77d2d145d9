"""Property test: a PyTorch-profiler trace with any value in any numeric field is read with warnings or
refused in one line, and no total it reports is negative (benchmarks/fuzz_inputs.py runs thousands)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphscope.cli import main

VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([2**31, 2**39, 2**63 - 1, 2**63, -(2**63), 4e15, -4e15, 1e308]),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.lists(st.integers(min_value=-(2**40), max_value=2**40), max_size=3),
)
FIELDS = st.sampled_from(["ts", "dur", "pid", "tid", "device", "stream", "correlation", "grid", "block", "bytes"])


def _trace(changes: list[tuple[int, str, object]]) -> str:
    events = []
    for i in range(4):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
                       "ts": 10 * i, "dur": 5, "args": {"correlation": i}})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100 + 10 * i, "dur": 4,
                       "args": {"correlation": i, "device": 0, "stream": 7, "grid": [1, 1, 1], "block": [64, 1, 1],
                                "bytes": 0}})  # fmt: skip
    for index, field, value in changes:
        event = events[index % len(events)]
        (event if field in ("ts", "dur", "pid", "tid") else event["args"])[field] = value
    return json.dumps({"traceEvents": events})


def _negative_total(value: object) -> bool:
    if isinstance(value, dict):
        return any(
            (k.endswith("total_ns") and isinstance(v, int | float) and v < 0) or _negative_total(v)
            for k, v in value.items()
        )
    return isinstance(value, list) and any(_negative_total(v) for v in value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 7), FIELDS, VALUES), min_size=1, max_size=4))
def test_any_value_in_any_field_is_read_or_refused_in_one_line(tmp_path, capsys, monkeypatch, changes):
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")  # one path, new contents each example; restored after
    path = tmp_path / "t.json"
    path.write_text(_trace(changes))
    code = main(["summary", "--json", "--no-cache", str(path)])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("graphscope: error:")
    else:
        assert not _negative_total(json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c))))
