"""The readable (non-JSON) form of `graphscope summary`."""

from __future__ import annotations

from typing import Any

from graphscope.core.rules import plural
from graphscope.core.text import printable_tree
from graphscope.core.units import format_bytes, format_ns
from graphscope.text.anatomy import anatomy_lines, graph_launch_lines, overlap_lines


def _rows(pairs: list[tuple[str, str]]) -> list[str]:
    width = max(len(k) for k, _ in pairs)
    return [f"  {k:<{width}}  {v}" for k, v in pairs]


def active_phrase(gpu: dict[str, Any]) -> str:
    """How a GPU spent the time from its first work to its last (what the verdicts judge), where that is
    shorter than the scope (start-up or a tail); empty otherwise."""
    active = gpu.get("active_ns") or 0
    if not active or active >= gpu["busy_ns"] + gpu["idle_ns"]:
        return ""
    return (
        f"; from its first work to its last ({format_ns(active)}): busy {gpu['busy_ns'] / active:.1%}, "
        f"{format_ns(gpu['active_host_wait_ns'])} waiting for the CPU"
    )


def launch_rows(launch: dict[str, Any]) -> list[tuple[str, str]]:
    """The launch figures as (label, value) rows, the verdict's number last under the verdict's label
    (the summary text, the GUI's Summary panel and reports print the same)."""
    steady = launch["steady_state"]
    unknown = "-"  # no call of that kind (or none linked to GPU work): a median of nothing is not 0
    one_off = steady["one_off_calls"]
    without = f", without {plural(one_off, 'one-off first call')}" if one_off else ""  # never "without 0"
    # a ratio over no GPU work is undefined, not 0 (the JSON's null there): qcu's export has 535 ms of launch
    # calls and no GPU activity recorded
    calls_ns = launch["kernel_launch_ns"] + launch["graph_launch_ns"]
    no_gpu = steady["gpu_busy_ns"] == 0
    overall = unknown if (calls_ns and not launch["overhead_ratio"]) or (not calls_ns and no_gpu) else (
        f"{launch['overhead_ratio']:.3f}"
    )
    steady_ratio = unknown if no_gpu else f"{steady['overhead_ratio']:.3f}"
    rows = [
        (  # the median eager call: none when every call captured
            "median launch call",
            format_ns(launch["median_api_ns"]) if launch["kernel_launch_ns"] and launch["median_api_ns"] else unknown,
        ),
        (
            "median launch latency",
            format_ns(launch["median_latency_ns"]) if launch.get("latency_calls", 1) else unknown,
        ),
        (
            "median graph launch call",
            format_ns(launch["median_graph_launch_api_ns"]) if launch["graph_launch_ns"] else unknown,
        ),
        ("CPU time in launch calls", format_ns(launch["kernel_launch_ns"] + launch["graph_launch_ns"])),
        (
            "capture",
            f"{plural(steady.get('capture_calls', 0), 'launch call')}, {format_ns(steady.get('capture_ns', 0))}  "
            "(inside stream captures: they build graphs, not eager launches)",
        ),
        (
            "without GPU work",
            f"{plural(steady.get('calls_without_work', 0), 'launch call')}, "
            f"{format_ns(steady.get('without_work_ns', 0))}{_named(steady.get('without_work_by_name', {}))}  "
            "(no GPU work in the trace: not counted)",
        ),
        (
            "blocked",
            f"{plural(steady.get('blocked_calls', 0), 'launch call')}, {format_ns(steady.get('blocked_ns', 0))}  "
            "(above their median, waiting behind queued work or an implicit sync)",
        ),
        (
            "submission",
            f"{format_ns(steady.get('submit_ns', steady['eager_launch_ns'] + steady['graph_launch_ns']))}  "
            "(steady-state launch calls less their blocked time)",
        ),
        ("overhead ratio", f"{overall}  (every launch call / GPU busy time)"),
        ("steady-state ratio", f"{steady_ratio}  (steady-state submission / its GPU busy time{without})"),
    ]
    if launch.get("judged"):
        rows.append((launch["judged"]["label"], f"{launch['judged']['value']:.3f}  (the verdict's number)"))
    return rows


def _named(counts: dict[str, int]) -> str:
    """' (cudaLaunchKernel 1,714, cuLaunchKernel 2)': calls by name, the three most frequent."""
    if not counts:
        return ""
    named = [f"{name} {count:,}" for name, count in list(counts.items())[:3]]
    return f" ({', '.join(named)}{'…' if len(counts) > 3 else ''})"


def render_summary(s: dict[str, Any]) -> str:
    """Format a `summarize()` result as aligned plain text (names from the trace with their terminal
    controls escaped: core/text.py)."""
    s = printable_tree(s)
    lines = [f"{s['file']}"]
    if s["nsys_version"] or not s["platform"] or "Kineto" not in s["platform"]:
        source = f"Nsight Systems {s['nsys_version'] or 'unknown version'}, schema {s['schema_version'] or '?'}, "
        source += s["platform"] or "platform ?"
    else:
        source = f"{s['platform']}, schema {s['schema_version'] or '?'}"
    lines.append(f"  {source}, span {format_ns(s['span_ns'])}")
    launch = s["launch"]
    scope = s.get("scope")
    if scope:
        lines.append(
            f"  scope: {scope['label']}, {format_ns(scope['start_ns'])} to {format_ns(scope['end_ns'])} "
            f"({format_ns(scope['covered_ns'])} inside)"
        )
    lines += ["", "Verdict", f"  {launch['verdict']}"]
    lines += ["", "Activity"]
    lines += _rows(
        [
            ("kernels", f"{s['kernels']['count']:,}  ({format_ns(s['kernels']['total_ns'])})"),
            (
                "memcpy",
                f"{s['memcpy']['count']:,}  ({format_ns(s['memcpy']['total_ns'])}, "
                f"{format_bytes(s['memcpy']['bytes'])})",
            ),
            ("memset", f"{s['memset']['count']:,}  ({format_ns(s['memset']['total_ns'])})"),
            (
                "CUDA API calls",
                f"{s['api']['count']:,}  ({s['api']['launches']:,} kernel launches, "
                f"{s['api']['graph_launches']:,} graph launches)",
            ),
            ("NVTX events", f"{s['nvtx']['count']:,}"),
            ("graph trace mode", s["graph_trace_mode"] or "-"),
            ("graph launches", f"{s['graphs']['launches']:,}  ({s['graphs']['node_activities']:,} node activities)"),
        ]
    )
    lines += ["", "Launches"]
    lines += _rows(launch_rows(launch))
    if s["gpu"]:
        lines += ["", "GPUs"]
        for gpu in s["gpu"]:
            lines.append(
                f"  device {gpu['device']}" + (f" {gpu['name']}" if gpu["name"] else "") + ": "
                f"busy {format_ns(gpu['busy_ns'])}, "
                f"idle {format_ns(gpu['idle_ns'])} ({format_ns(gpu['host_wait_idle_ns'])} waiting for the CPU), "
                f"utilization {gpu['utilization']:.1%}{active_phrase(gpu)}"
            )
            if gpu.get("launch"):  # several GPUs: each one's own verdict
                lines.append(f"    launches: {gpu['launch']['verdict']}")
    lines += overlap_lines(s.get("stream_overlap")) + anatomy_lines(s.get("anatomy"))
    lines += graph_launch_lines(s.get("graph_launch_cost"))  # analysis/launch_judge.py
    if s["top_kernels"]:
        lines += ["", "Top kernels (by total time)"]
        width = min(48, max(len(k["name"]) for k in s["top_kernels"]))
        lines.append(f"  {'name':<{width}}  {'count':>9}  {'total':>10}  {'median':>10}")
        for k in s["top_kernels"]:
            name = k["name"] if len(k["name"]) <= width else k["name"][: width - 1] + "…"
            lines.append(
                f"  {name:<{width}}  {k['count']:>9,}  {format_ns(k['total_ns']):>10}  {format_ns(k['median_ns']):>10}"
            )
    if s.get("nvtx_ranges"):
        lines += ["", "NVTX ranges (each a scope of its own)"]
        width = min(32, max(len(r["name"]) for r in s["nvtx_ranges"]))
        lines.append(
            f"  {'range':<{width}}  {'n':>4}  {'duration':>10}  {'kernels':>8}  {'launches':>8}  "
            f"{'submission':>10}  {'capture':>7}  {'GPU busy':>10}  {'ratio':>7}"
        )
        for r in s["nvtx_ranges"]:
            name = r["name"] if len(r["name"]) <= width else r["name"][: width - 1] + "…"
            ratio = "-" if r["overhead_ratio"] is None else f"{r['overhead_ratio']:.2f}"  # no GPU work: undefined
            lines.append(
                f"  {name:<{width}}  {r['instances']:>4}  {format_ns(r['median_duration_ns']):>10}  "
                f"{r['kernels']:>8,}  {r['launch_calls']:>8,}  {format_ns(r.get('submit_ns', r['launch_ns'])):>10}  "
                f"{r.get('capture_calls', 0):>7,}  {format_ns(r['gpu_busy_ns']):>10}  {ratio:>7}"
            )
    if s.get("capture_attribution"):
        lines += capture_lines(s["capture_attribution"])
    for title, items in (("Not in this file", s["lacks"]), ("Warnings", s["warnings"])):
        if items:
            lines += ["", title] + [f"  - {item}" for item in items]
    return "\n".join(lines)


def capture_lines(found: dict[str, Any], limit: int = 15) -> list[str]:
    """The replayed graph work by the operator (module and user frame) that made it during capture, the
    time by module, and how much of the replay's GPU time each field covers."""
    lines = ["", "Graph work by the operator that launched it during capture (every replay in the trace)"]
    if found.get("note"):
        lines.append(f"  {found['note']}")
    if not found["operators"]:
        return lines
    named = [_operator_name(o) for o in found["operators"]]
    width = min(40, max(len(n) for n in named))
    lines.append(f"  {'operator':<{width}}  {'nodes':>5}  {'replayed':>8}  {'GPU time':>10}  module  frame")
    for o, name in zip(found["operators"][:limit], named, strict=False):
        name = name if len(name) <= width else name[: width - 1] + "…"
        lines.append(
            f"  {name:<{width}}  {o['nodes']:>5,}  {o['activities']:>8,}  {format_ns(o['gpu_ns']):>10}  "
            f"{o.get('module') or '-'}  {o['frame'] or '-'}"
        )
    if len(found["operators"]) > limit:
        lines.append(f"  … {len(found['operators']) - limit} more operators (--json has them all)")
    if any(g["by_position_only"] for g in found["graphs"]):
        lines.append(
            "  (a graph ran on several streams: its nodes are matched to the capture's calls by position, "
            "which start order may not keep)"
        )
    inexact = [g for g in found["graphs"] if g.get("match") not in (None, "exact", "node creation events")]
    if inexact:
        how = " or ".join(sorted({g["match"] for g in inexact}))
        lines.append(
            f"  {len(inexact)} graph(s) matched with {how}: a node's fields are kept where every placement agrees"
        )
    coverage = found.get("coverage")
    if coverage and coverage.get("gpu_ns"):
        shares = ", ".join(f"{k} {coverage[k]:.0%}" for k in ("operator", "module", "shapes", "frame", "api"))
        lines.append(f"  Replay GPU time attributed: {shares}")
    lines += module_lines(found.get("modules") or [], found.get("coverage", {}).get("gpu_ns", 0), limit)
    return lines


def _operator_name(row: dict[str, Any]) -> str:
    """An operator row's name; one without an operator named by the call that made its nodes."""
    if row["operator"].startswith("(") and row.get("api"):
        return f"{row['operator'][:-1]}: {row['api']})"
    return row["operator"]


def module_lines(modules: list[dict[str, Any]], total_ns: int, limit: int = 15) -> list[str]:
    """Time by module inside graphs: replayed GPU time per nn.Module path."""
    if not modules:
        return []
    lines = ["", "Time by module inside graphs"]
    width = min(60, max(len(m["module"]) for m in modules))
    lines.append(f"  {'module':<{width}}  {'nodes':>5}  {'GPU time':>10}  {'share':>6}")
    for m in modules[:limit]:
        name = m["module"] if len(m["module"]) <= width else "…" + m["module"][-(width - 1) :]
        share = f"{m['gpu_ns'] / total_ns:.0%}" if total_ns else "-"
        lines.append(f"  {name:<{width}}  {m['nodes']:>5,}  {format_ns(m['gpu_ns']):>10}  {share:>6}")
    if len(modules) > limit:
        lines.append(f"  … {len(modules) - limit} more modules (--json has them all)")
    return lines
