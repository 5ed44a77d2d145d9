"""The shared vocabulary has one home (core/events.py, core/rules.py, and the set of trace tables in
trace/tables.py): nothing else spells it."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.core.events import (
    CORRELATED,
    GPU_WORK,
    NODE_WORK,
    Activity,
    call_key,
    graph_of,
    index_in_graph,
    node_id,
    pair_key,
)
from graphscope.core.table import Table
from graphscope.trace import tables
from graphscope.trace.model import Trace

PACKAGE = Path(__file__).resolve().parents[1] / "graphscope"
KIND_WORDS = r'"(?:kernels?|memcpy|memset|sync|graph_launches)"'
SPELLINGS = {
    "a node-id shift": re.compile(r"<<\s*32|>>\s*32|<<\s*48"),
    "a node-id mask": re.compile(r"0x[fF]{8}\b"),
    "a tuple of activity kinds": re.compile(rf"[(\[]\s*{KIND_WORDS}\s*,\s*{KIND_WORDS}"),
    "a runner NVTX name": re.compile(r"graphscope (?:\{mode\}|eager|graph|\*) (?:rep|warm-up)"),
    "a rule threshold": re.compile(r"^(?:LAUNCH_BOUND_RATIO|WORTHWHILE_GAIN|NEGLIGIBLE_GAIN|MIN_GAIN)\s*=", re.M),
}


def test_no_module_outside_core_spells_the_vocabulary():
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "core":
            continue
        text = path.read_text()
        for what, pattern in SPELLINGS.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what} ({match.group(0)!r})")
    assert not found, "spelled outside core/ (use core.events / core.rules):\n" + "\n".join(found)


def test_groupings_are_prefixes_so_kind_columns_index_them():
    assert [int(k) for k in NODE_WORK] == [0, 1, 2]
    assert GPU_WORK[: len(NODE_WORK)] == NODE_WORK and CORRELATED[: len(GPU_WORK)] == GPU_WORK
    assert all(Activity.of_table(k.table) is k for k in CORRELATED)
    assert Activity.KERNEL.noun == "kernel" and Activity.GRAPH.table == "graph_launches"


@given(st.integers(0, 2**31 - 1), st.integers(0, 2**32 - 1))
def test_node_ids_round_trip(graph, index):
    node = node_id(graph, index)
    assert graph_of(node) == graph and index_in_graph(node) == index
    array = node_id(np.array([graph]), np.array([index]))
    assert int(graph_of(array)[0]) == graph and int(index_in_graph(array)[0]) == index


@given(st.lists(st.tuples(st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62)), max_size=50))
def test_pair_keys_never_collide(pairs):
    first = np.array([p[0] for p in pairs], dtype=np.int64)
    second = np.array([p[1] for p in pairs], dtype=np.int64)
    keys = pair_key(first, second)
    assert len(set(keys.tolist())) == len(set(pairs))


def test_call_keys_separate_processes():
    keys = call_key(np.array([0, 1], dtype=np.int32), np.array([7, 7], dtype=np.int64))
    assert keys[0] != keys[1]


def _table_sets(text: str, where: str) -> list[str]:
    """Literals in `text` (a module's source) that name three or more trace tables and nothing else:
    ("api", "kernels", ...), {"kernels": ..., "memcpy": ..., ...} or (trace.api, trace.kernels, trace.memcpy)."""
    keys = set(tables.ALL_KEYS)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        words = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        fields = [e.attr for e in items if isinstance(e, ast.Attribute)]
        for named, what in ((words, "names"), (fields, "fields")):
            if len(named) >= 3 and len(named) == len(items) and set(named) <= keys:
                found.append(f"{where}:{node.lineno}: table {what} {named}")
    return found


def test_the_set_of_trace_tables_is_declared_once():
    """trace/tables.py is the only place that lists trace tables; the rest derives its sets from it (or from
    core.events' groupings), so a new table is one line there and one field of `Trace`."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != PACKAGE / "trace" / "tables.py":
            found += _table_sets(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    assert not found, "a set of trace tables written out by hand (derive it from trace/tables.py):\n" + "\n".join(found)


def test_a_hand_written_table_set_is_caught():
    text = (
        'KEEP = ("api", "kernels", "nvtx")\nSPAN = (trace.api, trace.sync, trace.memset)\nNOT = ("api", "x", "nvtx")\n'
    )
    assert _table_sets(text, "probe.py") == [
        "probe.py:1: table names ['api', 'kernels', 'nvtx']",
        "probe.py:2: table fields ['api', 'sync', 'memset']",
    ]


def test_the_spec_and_the_trace_hold_the_same_tables():
    fields = [f.name for f in dataclasses.fields(Trace) if f.type in ("Table", Table)]
    assert sorted(fields) == sorted(tables.ALL_KEYS)
    assert {spec.key for spec in tables.TABLES if not spec.cpu} == {kind.table for kind in CORRELATED}
    for spec in tables.TABLES:
        assert spec.eager is None or set(spec.eager) <= set(spec.columns), spec.key
        assert spec.columns["start"].sources and "end" in spec.columns, spec.key
