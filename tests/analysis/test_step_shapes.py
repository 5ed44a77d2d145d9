"""A step that changes mode names "a shape never seen before" where the trace records shapes; operators
whose shapes change every step anyway are no cause.

The trace is built from the shipped HTA rank0_of_16 trace (14 graph launches a step, record_shapes on):
in ProfilerStep#553 the graph launches are renamed eager launches and every operator's first input has
its first dimension doubled (as a new batch size run eagerly would show). The expected shapes are
counted a second way from the plain JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from graphscope.analysis.anatomy import anatomy, changes
from graphscope.analysis.summary import analyze
from graphscope.trace.reader import load_trace

RANK0 = Path("/work/shared/traces/kineto/hta__rank0_of_16_graph_launches.json.gz")
if not RANK0.exists():
    RANK0 = Path(__file__).resolve().parents[1] / "data" / "kineto" / RANK0.name
CHANGED = "ProfilerStep#553"


def _built(tmp_path: Path) -> tuple[Path, list[dict]]:
    doc = json.loads(gzip.decompress(RANK0.read_bytes()))
    events = doc["traceEvents"]
    step = next(e for e in events if e.get("name") == CHANGED)
    lo, hi = step["ts"], step["ts"] + step["dur"]
    for event in events:
        if event.get("ph") != "X" or not lo <= event["ts"] < hi:
            continue
        if event.get("name") == "cudaGraphLaunch":
            event["name"] = "cudaLaunchKernel"
        dims = event.get("args", {}).get("Input Dims")
        if event.get("cat") == "cpu_op" and dims and isinstance(dims[0], list) and dims[0]:
            dims[0] = [dims[0][0] * 2, *dims[0][1:]]
    path = tmp_path / "rank0_step553_eager_new_shapes.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path, events


def _plain_pairs(events: list[dict]) -> dict[str, list[tuple[str, str, str]]]:
    """Per step name, its operators' distinct (name, Input Dims, Input type) in start order (plain JSON)."""
    steps = sorted((e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    ops = sorted((e for e in events if e.get("cat") == "cpu_op" and e.get("ph") == "X"), key=lambda e: e["ts"])
    found: dict[str, list[tuple[str, str, str]]] = {s["name"]: [] for s in steps}
    for op in ops:
        dims = op.get("args", {}).get("Input Dims")
        if not isinstance(dims, list) or not dims or not all(isinstance(d, list) for d in dims):
            continue
        step = next((s for s in steps if s["ts"] <= op["ts"] < s["ts"] + s["dur"]), None)
        if step is not None:
            pair = (op["name"], json.dumps(dims), json.dumps(op["args"].get("Input type")))
            if pair not in found[step["name"]]:
                found[step["name"]].append(pair)
    return found


def test_a_step_run_eagerly_at_a_new_shape_names_the_shape(tmp_path):
    path, events = _built(tmp_path)
    trace = load_trace(path)
    a = analyze(trace)
    found = anatomy(trace, a.work, a.graphs, a.launches)
    assert found.modes == ["mixed", "piecewise", "piecewise", "eager", "piecewise"]
    by_step = {c["step"]: c for c in changes(found)}
    assert set(by_step) == {"ProfilerStep#551", CHANGED, "ProfilerStep#554"}
    why = by_step[CHANGED]["why"]
    assert why[0] == f"{CHANGED}: no graph launch" and by_step[CHANGED]["returns"]
    (shape_line,) = [line for line in why if "never seen before" in line]
    # the second way: plain JSON sets; operators with a new shape in the one step whose mode did not
    # change (ProfilerStep#552, piecewise after piecewise) are left out, as the rule says
    pairs = _plain_pairs(events)
    names = list(pairs)
    before = {p for n in names[: names.index(CHANGED)] for p in pairs[n]}
    volatile = {p[0] for p in pairs["ProfilerStep#552"] if p not in {q for n in names[:2] for q in pairs[n]}}
    expected = [p for p in pairs[CHANGED] if p not in before and p[0] not in volatile]
    assert len(expected) > 100
    first = expected[0]
    assert shape_line.startswith(f"{CHANGED}: a shape never seen before: {first[0]} (")
    assert str(json.loads(first[1])[0]).replace(" ", "") in shape_line.replace(" ", "")
    assert shape_line.endswith(f" and {len(expected) - 1:,} more operator shapes new in the step")
    assert not any("never seen before" in line for line in by_step["ProfilerStep#554"]["why"])  # old shapes again


def test_shapes_that_change_every_step_are_no_cause():
    """The shipped trace as it is: its mixed first step turns piecewise in ProfilerStep#551, whose aten::to
    runs an int[N] no earlier step ran; so does every step after it (N follows the data): no cause."""
    trace = load_trace(RANK0)
    a = analyze(trace)
    found = anatomy(trace, a.work, a.graphs, a.launches)
    assert found.shapes is not None and all(len(s) > 600 for s in found.shapes)
    (change,) = changes(found)
    assert not any("never seen before" in line for line in change["why"])
