"""Tuning strategies compared on the same recorded landscapes (no GPU): best found against trials spent.

Each landscape is a model of a graph's replay time as a function of every node's block (tune/measure.py's
RecordedMeasurer draws noisy samples around it, 1% noise, the session's repetitions). Strategies: brute
(each candidate of each knob against the baseline, then the winners together), descent (knob by knob,
two passes), model (Optuna's TPE sampler over the whole product space, budgets of 1x and 2x one brute
pass). Reported: trials measured, and the winner's true time over the landscape's optimum.

    python benchmarks/tune_strategies.py
"""

from __future__ import annotations

import itertools
from pathlib import Path

from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.tune.measure import RecordedMeasurer
from graphscope.tune.session import tune
from graphscope.tune.space import knobs_for

BLOCKS = (32, 64, 128, 256, 512, 1024)


def sites(count: int) -> list[Site]:
    shape = ((1 << 16, 1, 1), (256, 1, 1), (256, 1, 1))
    return [Site(f"k{i}", 0, f"kernel_{i}", *shape, max_threads=1024) for i in range(count)]


def separable(count: int):
    best = {f"k{i}": BLOCKS[i % len(BLOCKS)] for i in range(count)}

    def model(config: LaunchConfig) -> tuple[float, bool]:
        total = 1_000_000.0
        for name, target in best.items():
            block = config.blocks.get(name, (256, 1, 1))[0]
            total += 20_000 * abs(block.bit_length() - target.bit_length())
        return total, True

    return model


def coupled(count: int):
    """Neighbours share the GPU: pairs (k0,k1), (k2,k3), ... are fastest at 512 together and slower when
    only one of a pair moves, on top of a separable landscape for the rest."""
    base = separable(count)

    def model(config: LaunchConfig) -> tuple[float, bool]:
        total, _ = base(config)
        for i in range(0, count - 1, 2):
            a = config.blocks.get(f"k{i}", (256, 1, 1))[0]
            b = config.blocks.get(f"k{i + 1}", (256, 1, 1))[0]
            total += -150_000 if (a, b) == (512, 512) else 25_000 * ((a != 256) + (b != 256))
        return total, True

    return model


def optimum(model, count: int) -> float:
    names = [f"k{i}" for i in range(count)]
    return min(model(LaunchConfig({n: (b, 1, 1) for n, b in zip(names, combo)}))[0]
               for combo in itertools.product(BLOCKS, repeat=count))  # fmt: skip


def main() -> None:
    print(f"{'landscape':<14} {'strategy':<12} {'trials':>6} {'best / optimum':>15}")
    for name, make, count in (("separable x4", separable, 4), ("coupled x4", coupled, 4), ("coupled x6", coupled, 6)):
        model = make(count)
        floor = optimum(model, count)
        knobs = knobs_for(sites(count))
        one_pass = sum(len(k.candidates) for k in knobs)
        for strategy, budget in (("brute", None), ("descent", None), ("model", one_pass), ("model", 2 * one_pass)):
            result = tune(Path("w.py"), knobs, RecordedMeasurer(model), strategy, reps=20, budget=budget)
            label = strategy if budget is None else f"model {budget}"
            ratio = model(result.best.config)[0] / floor
            print(f"{name:<14} {label:<12} {len(result.trials):>6} {ratio:>15.3f}")


if __name__ == "__main__":
    main()
