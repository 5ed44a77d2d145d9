"""Loaded by a workload child whose PYTHONPATH has this folder (benchmarks/gpu_jobs/apply.sh): each
LiveGraph.apply is profiled, and every garbage collection longer than 1 ms is logged, to APPLY_PROBE."""
import cProfile
import gc
import io
import os
import pstats
import time

OUT = os.environ.get("APPLY_PROBE")
if OUT:
    _started = {}

    def _gc(phase, info):
        if phase == "start":
            _started["t"] = time.perf_counter_ns()
        else:
            took = time.perf_counter_ns() - _started.get("t", 0)
            if took > 1_000_000:
                with open(OUT, "a") as f:
                    f.write(f"gc gen {info['generation']} {took / 1e6:.2f} ms collected {info['collected']}\n")

    gc.callbacks.append(_gc)
    from graphscope.graph import live

    plain = live.LiveGraph.apply

    def apply(self, changes):
        profile = cProfile.Profile()
        result = profile.runcall(plain, self, changes)
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(12)
        with open(OUT, "a") as f:
            f.write(f"apply {result['apply_ns'] / 1e6:.2f} ms\n{text.getvalue()}\n")
        return result

    live.LiveGraph.apply = apply
