"""A verdict must not contradict the numbers printed beside it (found walking the shipped traces):
- a ratio that rounds to the rule it is judged against is printed with the decimals that tell them apart
  (hta's trace_diff control printed "launch overhead 15% ... below the ~15% rule", its ratio 0.1478);
- a ratio over no GPU work is unknown, not 0; the one-off calls a ratio leaves out are named when there
  are some."""

from __future__ import annotations

import json
import sqlite3

from graphscope.analysis.summary import summarize
from graphscope.core.rules import LAUNCH_BOUND_RATIO, percent_beside
from graphscope.trace import load_trace
from tests.conftest import DATA

CONTROL = DATA / "kineto" / "hta__trace_diff_control_eager.json.gz"


def test_a_ratio_is_never_printed_as_the_rule_it_is_judged_against():
    assert percent_beside(0.1478, LAUNCH_BOUND_RATIO) == "14.8%"
    assert percent_beside(0.1504, LAUNCH_BOUND_RATIO) == "15.04%"
    assert percent_beside(0.15, LAUNCH_BOUND_RATIO) == "15%"  # exactly the rule: nothing to tell apart
    assert percent_beside(0.69, LAUNCH_BOUND_RATIO) == "69%"
    assert percent_beside(0.0497, 0.05, 1) == "4.97%" and percent_beside(0.012, 0.05, 1) == "1.2%"


def test_the_trace_diff_control_prints_the_ratio_it_judged_below_the_rule():
    launch = summarize(load_trace(CONTROL), whole=True)["launch"]
    ratio = launch["judged"]["value"]
    assert launch["launch_bound"] is False and ratio < LAUNCH_BOUND_RATIO
    assert f"{ratio:.0%}" == f"{LAUNCH_BOUND_RATIO:.0%}"  # the trap: the ratio rounds to the rule
    assert f"launch overhead {ratio:.1%} (" in launch["verdict"] and "below the ~15% rule" in launch["verdict"]


def test_the_steady_state_row_names_one_off_calls_only_when_some_were_left_out():
    from graphscope.text.summary import launch_rows

    launch = summarize(load_trace(CONTROL), whole=True)["launch"]
    (row,) = [value for label, value in launch_rows(launch) if label == "steady-state ratio"]
    one_off = launch["steady_state"]["one_off_calls"]
    assert one_off >= 1 and row.endswith(f", without {one_off} one-off first call{'s' if one_off > 1 else ''})")
    launch["steady_state"]["one_off_calls"] = 0
    (row,) = [value for label, value in launch_rows(launch) if label == "steady-state ratio"]
    assert row.endswith("(steady-state submission / its GPU busy time)") and "without 0" not in row


def test_a_template_instance_first_launch_is_one_off_in_a_profiler_trace():
    """The MI250 toy's verdict rested on one 6.5 ms hipLaunchKernel: the first launch of one
    vectorized_elementwise_kernel instance (lazy loading), not the first of its short name."""
    import gzip

    path = DATA / "kineto" / "hta__amd_mi250_minitoy.json.gz"
    with gzip.open(path) as file:
        events = json.load(file)["traceEvents"]
    calls = sorted((e for e in events if e.get("name") == "hipLaunchKernel"), key=lambda e: e["dur"])
    slow = calls[-1]
    (kernel,) = [
        e for e in events if e.get("cat") == "kernel" and e["args"]["correlation"] == slow["args"]["correlation"]
    ]
    same = [e for e in events if e.get("cat") == "kernel" and e["name"] == kernel["name"]]
    assert slow["dur"] > 1000 * calls[len(calls) // 2]["dur"] and min(e["ts"] for e in same) == kernel["ts"]
    launch = summarize(load_trace(path), whole=True)["launch"]
    steady = launch["steady_state"]
    assert steady["one_off_calls"] == 1 and abs(steady["one_off_ns"] - slow["dur"] * 1000) < 1000
    assert launch["launch_bound"] is not True  # 4454% of GPU busy time came from that one call


def test_a_ratio_over_no_gpu_work_is_printed_as_unknown_not_zero():
    """qcu's export: 2,085 launch calls (535 ms of CPU time) and no GPU activity recorded; its ratios have
    nothing to divide by ('overhead ratio 0.000' read as 'no launch overhead')."""
    from graphscope.text.summary import launch_rows

    path = DATA / "ZhangXin8069__qcu__report1.sqlite"
    with sqlite3.connect(path) as db:
        (launches,) = db.execute(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
            "WHERE s.value LIKE 'c%LaunchKernel%'"
        ).fetchone()
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert launches == 2085 and "CUPTI_ACTIVITY_KIND_KERNEL" not in tables
    rows = dict(launch_rows(summarize(load_trace(path), whole=True)["launch"]))
    assert rows["overhead ratio"].startswith("-  (") and rows["steady-state ratio"].startswith("-  (")
    control = dict(launch_rows(summarize(load_trace(CONTROL), whole=True)["launch"]))
    assert control["overhead ratio"].startswith("0.15")  # a ratio over GPU work is still printed


def test_one_string_cut_short_is_named_in_the_singular():
    path = DATA / "PolPuigPuy__OpenACC_Project_PolPuig__report2.sqlite"
    with sqlite3.connect(path) as db:
        (long,) = db.execute("SELECT count(*) FROM StringIds WHERE length(value) > 65536").fetchone()
    warnings = summarize(load_trace(path), whole=True)["warnings"]
    assert long == 1 and "StringIds: 1 string longer than 65,536 characters was cut short" in warnings
