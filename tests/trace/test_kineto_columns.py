"""The columns of a PyTorch-profiler trace (trace/kineto_columns.py) are the values the event-by-event
reference gives: on real traces table by table, and on batches with any value in any field."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphscope.trace import kineto_columns, load_trace
from graphscope.trace.kineto_columns import COLUMNS, TABLE_OF, Columns
from graphscope.trace.kineto_json import Event

DATA = Path(__file__).resolve().parent.parent / "data" / "kineto"
TABLES = ("api", "kernels", "memcpy", "memset", "nvtx", "threads", "processes")


def _tables(path: Path) -> dict[str, dict[str, np.ndarray]]:
    trace = load_trace(path)
    kept = {key: {c: getattr(trace, key)[c] for c in getattr(trace, key).columns} for key in TABLES}
    kept["symbols"] = {"names": np.array([trace.symbols.name(i) for i in range(len(trace.symbols))])}
    return kept


@pytest.mark.parametrize("name", ["h100_decoder_eager", "hta__rank0_of_16_graph_launches", "hta__amd_mi250_minitoy"])
def test_real_traces_read_by_columns_equal_the_event_by_event_read(name, monkeypatch):
    path = DATA / f"{name}.json.gz"
    fast = _tables(path)

    def slow(self, key, events, names, shapes):
        raise kineto_columns._Slow

    monkeypatch.setattr(Columns, "_columns", slow)
    reference = _tables(path)
    assert fast.keys() == reference.keys()
    for key, columns in reference.items():
        assert fast[key].keys() == columns.keys(), key
        for column, values in columns.items():
            assert fast[key][column].dtype == values.dtype, (key, column)
            assert np.array_equal(fast[key][column], values), (key, column)
    assert len(fast["kernels"]["start"]) and len(fast["api"]["start"]) and len(fast["nvtx"]["start"])


NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=0, max_value=2**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=0, max_value=1e7),
    st.sampled_from([2**53, 2**53 + 1, 4611686018427387, 4611686018427388, 2**62, 2**63, -(2**63) - 1, 1e13 + 0.5]),
    st.text(max_size=4),
    st.sampled_from(["12", "1.5e3", "x"]),
    st.none(),
)
DIMS = st.one_of(
    st.lists(st.integers(min_value=-(2**64), max_value=2**64), min_size=3, max_size=3),
    st.lists(st.integers(min_value=0, max_value=1024), max_size=4),
    st.lists(st.one_of(st.booleans(), st.integers(0, 4), st.text(max_size=2)), max_size=3),
    st.none(),
    st.integers(0, 9),
)
FIELDS = ("ts", "dur", "pid", "tid", "correlation", "device", "stream", "context", "bytes", "registers per thread")
CATEGORIES = st.sampled_from([*TABLE_OF, "ac2g", None])


@st.composite
def _events(draw: st.DrawFn) -> list[dict]:
    events = []
    for i in range(draw(st.integers(1, 12))):
        args: dict = {"correlation": i, "device": 0, "stream": 7, "grid": [2, 1, 1], "block": [128, 1, 1]}
        event: dict = {"ph": draw(st.sampled_from(["X", "X", "X", "i"])), "name": draw(st.sampled_from("abc"))}
        event |= {"pid": 1, "tid": 2, "ts": 1_000 + 10 * i, "dur": 5, "args": args}
        if draw(st.booleans()):
            event["ts"] = 1661938466265032.125 + i
        for field in draw(st.lists(st.sampled_from(FIELDS), max_size=3)):
            (event if field in ("ts", "dur", "pid", "tid") else args)[field] = draw(NUMBERS)
        for field in draw(st.lists(st.sampled_from(["grid", "block"]), max_size=2)):
            args[field] = draw(DIMS)
        if draw(st.integers(0, 5)) == 0:
            del event["args"]
        if draw(st.booleans()):
            args["Input Dims"], args["Input type"] = [[4, 16], []], ["float", "Scalar"]
        category = draw(CATEGORIES)
        if category is not None:
            event["cat"] = category
        events.append(event)
    return events


def _reference(batch: list[Event]) -> tuple[Columns, dict[str, list[tuple[int, ...]]]]:
    """The event-by-event read: each event's row, file order; a value that is not a number skips it."""
    columns, rows = Columns(), {key: [] for key in COLUMNS}
    for e in batch:
        key = TABLE_OF.get(e.cat) if e.ph == "X" else None
        if key is not None:
            try:
                rows[key].append(columns._row(key, e))
            except (TypeError, ValueError, OverflowError):
                columns.skipped += 1
    return columns, rows


def _named(columns: Columns, key: str, rows: list) -> list[list]:
    """Rows with symbol ids as their text (a skipped event's name may or may not have been interned)."""
    text = {i: name for name, i in columns.names.items()} | {-1: None}
    at = [i for i, c in enumerate(COLUMNS[key]) if c in ("name", "text", "shapes")]
    return [[text[v] if i in at else v for i, v in enumerate(row)] for row in rows]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events())
def test_any_batch_read_by_columns_equals_the_event_by_event_read(events):
    try:
        batch = msgspec.json.decode(json.dumps(events).encode(), type=list[Event])
    except msgspec.ValidationError:
        return  # a number beyond what JSON numbers decode to: the reader refuses the file (tests elsewhere)
    reference, rows = _reference(batch)
    columns = Columns()
    columns.add(batch)
    assert columns.skipped == reference.skipped
    for key in COLUMNS:
        assert _named(columns, key, columns.rows(key).tolist()) == _named(reference, key, rows[key]), key
    if not reference.skipped:  # names interned in file order, whatever path each table took
        assert columns.names == reference.names


def test_the_reader_fills_the_tables_trace_tables_marks_as_kinetos():
    from graphscope.trace.tables import KINETO_KEYS

    assert set(COLUMNS) == set(KINETO_KEYS) == set(TABLE_OF.values())
