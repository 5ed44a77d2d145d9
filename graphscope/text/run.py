"""The readable form of `graphscope run` (input: a run report's JSON form)."""

from __future__ import annotations

from typing import Any

from graphscope.core.rules import PROFILER_DISTORTS
from graphscope.core.text import printable_tree
from graphscope.core.units import format_ns
from graphscope.text import conditional as conditional_trace


def _cell(stats: dict[str, float], interval: bool = False) -> str:
    text = format_ns(stats["median"])
    return f"{text} [{format_ns(stats['ci_low'])}-{format_ns(stats['ci_high'])}]" if interval else text


def own_cost_line(own: dict[str, Any]) -> str:
    """'graphscope's own launch path: 1,000 ctx.launcher calls x 0.06 us = 60 us per eager step (...)'."""
    parts = []
    for path, key in (("ctx.launch", "launch_ns"), ("ctx.launcher", "launcher_ns")):
        count = own["launches"].get(path.removeprefix("ctx."), 0)
        if count:
            parts.append(f"{count:,} {path} calls x {format_ns(own[key])}")
    line = f"graphscope's own launch path: {' + '.join(parts)} = {format_ns(own['per_step_ns'])} per eager step"
    if own.get("share_of_eager") is not None:
        line += f" ({own['share_of_eager']:.1%} of its end to end"
        if own.get("speedup_without") is not None:
            line += f"; speed-up without it {own['speedup_without']:.2f}x"
        line += ")"
    return line


def render_run(report: dict[str, Any]) -> str:
    report = printable_tree(report)  # terminal controls in names escaped
    env = report["environment"]
    lines = [
        f"{report['workload']}",
        f"  on {env.get('gpu')} (CUDA driver {env.get('driver_cuda')}, CuPy {env.get('cupy')}); "
        f"{report['reps']} repetitions after {report['warmup']} warm-up; medians per step, 95% intervals",
        "",
        f"  {'mode':<6} {'end to end':<28} {'GPU span (events)':<18} {'CPU submit':<12} spread",
    ]
    for mode, result in report["modes"].items():
        stats = result["stats"]
        spread = (stats["wall_ns"]["q3"] - stats["wall_ns"]["q1"]) / stats["wall_ns"]["median"]
        lines.append(
            f"  {mode:<6} {_cell(stats['wall_ns'], True):<28} {_cell(stats['gpu_ns']):<18} "
            f"{_cell(stats['submit_ns']):<12} {spread:.1%} IQR"
        )
    capture = report["modes"].get("graph", {}).get("capture")
    if capture:
        lines.append(
            f"  graph, once: capture {format_ns(capture['capture_ns'])}, end capture + instantiate "
            f"{format_ns(capture['instantiate_ns'])}, upload {format_ns(capture['upload_ns'])} "
            f"({capture['launches_captured']} tunable launches)"
            + (f"; warm-up before it {format_ns(capture['warm_up_ns'])}" if capture.get("warm_up_ns") else "")
        )
    wall, gpu = report["speedup"].get("wall_ns"), report["speedup"].get("gpu_ns")
    if wall:
        lines.append(
            f"  speed-up: {wall['value']:.2f}x end to end [{wall['low']:.2f}-{wall['high']:.2f}], "
            f"{gpu['value']:.2f}x GPU span"
        )
    own = report.get("own_cost")
    if own:
        lines.append("  " + own_cost_line(own))
    lines += conditional_trace.run_lines(report)  # conditional nodes: iterations and their cost
    for mode, result in report["modes"].items():
        outputs = result["outputs"]
        if outputs.get("nonfinite"):
            lines.append(f"  outputs ({mode}): {outputs['note']}")
        elif mode == "eager" and outputs.get("match") is False:
            lines.append(f"  outputs (eager run to run): DRIFT ({outputs.get('worst') or 'an output'} changed)")
        elif mode != "eager" and outputs.get("checked"):
            state = (
                "match exactly"
                if outputs.get("exact")
                else (
                    f"match within tolerance (max |diff| {outputs['max_abs_diff']:.3g})"
                    if outputs["match"]
                    else f"DIFFER (max |diff| {outputs.get('max_abs_diff', float('nan')):.3g})"
                )
            )
            lines.append(f"  outputs ({mode} vs eager): {state}")
        elif mode != "eager":
            lines.append(f"  outputs: {outputs.get('note', 'not checked')}")
    if report.get("divergence"):
        from graphscope.text.diverge import divergence_lines

        lines += divergence_lines(report["divergence"])
    lines += ["", f"Verdict: {report['verdict']}"]
    profiled = report.get("profiled") or {}
    for mode, files in report.get("traces", {}).items():
        line = f"  {mode} trace: {files['sqlite']}"
        seen = profiled.get(mode)
        if seen:
            who = "Nsight Systems" if seen["profiler"] == "nsys" else "torch.profiler"
            line += f" ({who}, {seen['reps']} repetitions: {format_ns(seen['wall_ns'])} per step"
            if seen.get("overhead") is not None:
                line += f", {seen['overhead']:+.1%} against the unprofiled run"
            line += ")"
        lines.append(line)
        lines += conditional_trace.trace_lines(seen or {})
        if seen and (seen.get("overhead") or 0) > PROFILER_DISTORTS:
            lines.append(
                f"    the profiler slowed {mode} by more than {PROFILER_DISTORTS:.0%}: its launch figures are the "
                "profiler's; judge speed from the unprofiled numbers above and the trace for its shape"
            )
    if report.get("attribution"):
        lines += attribution_lines(report["attribution"], capture, profiled.get("graph", {}).get("capture"))
    return "\n".join(lines)


def attribution_lines(
    found: dict[str, Any], plain: dict[str, Any] | None, recorded: dict[str, Any] | None
) -> list[str]:
    """The graph trace's replay attributed to its capture: coverage, top modules, what lost it, and what
    recording the capture's stacks cost (its capture time against the unprofiled run's)."""
    coverage = found.get("coverage") or {}
    lines = []
    if coverage.get("gpu_ns"):
        shares = ", ".join(f"{k} {coverage[k]:.1%}" for k in ("module", "frame", "operator", "shapes"))
        lines.append(f"  replayed graph work attributed (share of replay GPU time): {shares}")
        for m in found.get("modules", [])[:3]:
            lines.append(f"    {m['module']}: {format_ns(m['gpu_ns'])} in {m['nodes']} nodes")
        for name, kernels in (found.get("lost") or {}).items():
            named = ", ".join(f"{k['kernel']} ({k['nodes']})" for k in kernels[:3])
            lines.append(f"    without a {'line' if name == 'frame' else name}: {named}")
    if found.get("note"):
        lines.append(f"  attribution: {found['note']}")
    if plain and recorded:
        lines.append(
            f"  capture while recording stacks, shapes and modules: {format_ns(recorded['capture_ns'])} "
            f"(unprofiled {format_ns(plain['capture_ns'])})"
        )
    return lines
