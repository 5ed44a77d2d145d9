"""What this machine's host does with memory its guest frees, and what that costs everything running.

This machine is a virtual machine whose kernel reports freed memory to the host (Firecracker's free page
reporting: `page_reporting.page_reporting_order` on the kernel's command line), which takes it back. Two
measurements, each in fresh processes:

- touch: a process fills N GiB of new memory, once right after another process freed as much, once after
  a pause (the host has taken it back by then and backs every page again);
- bystander: a pure-Python loop (a stand-in for a window's frames) runs while another process allocates,
  touches and frees 512 MiB again and again; then while that process keeps its freed memory instead
  (glibc told not to hand it back: MALLOC_MMAP_MAX_=0). The loop's worst gap is the frame a window would
  have missed, though it shares no memory, lock or interpreter with the other process.

`settle` is what the other benchmarks call between fresh processes, so that one run's freed memory is
not taken back by the host during the next one.

    python benchmarks/host_memory.py [--gib 4] [--pause 5] [--rounds 2] [--seconds 8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

FILL = """
import os, sys, time
import numpy as np
n = int(float(sys.argv[1]) * 2**30) // 8
t = time.perf_counter()
memory = np.empty(n)
for start in range(0, n, 1 << 24):
    memory[start:start + (1 << 24)] = 1.0
print(f"{time.perf_counter() - t:.2f}")
"""
CHURN = """
import time
import numpy as np
while True:
    block = np.empty(64 << 20)  # 512 MiB
    block.fill(1.0)
    del block
    time.sleep(0.05)
"""
BYSTANDER = """
import sys, time
seconds = float(sys.argv[1])
worst, over, last = 0.0, 0, time.perf_counter()
end = last + seconds
while last < end:
    [i * 2 for i in range(2000)]  # about 0.1 ms of Python
    now = time.perf_counter()
    worst, over, last = max(worst, now - last), over + (now - last > 0.016), now
print(f"{worst * 1e3:.1f} {over}")
"""


def stolen_ms() -> float:
    """Milliseconds the host took of this machine's cores (/proc/stat 'steal', all cores; 0 where unknown)."""
    try:
        with open("/proc/stat") as stat:
            return int(stat.readline().split()[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def settle(seconds: float) -> None:
    """Wait `seconds`, then until the host has taken nothing of the cores for a second (at most 30 s more):
    what the previous process freed has been taken back before the next one starts."""
    time.sleep(seconds)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = stolen_ms()
        time.sleep(1.0)
        if stolen_ms() == before:
            return


def fill(gib: float) -> float:
    """Seconds to fill `gib` GiB of new memory in a fresh process."""
    out = subprocess.run([sys.executable, "-c", FILL, str(gib)], capture_output=True, text=True, check=True)
    return float(out.stdout)


def bystander(seconds: float, churn_env: dict[str, str] | None) -> tuple[float, int, float]:
    """The bystander loop's worst gap (ms) and gaps over 16 ms, and what the host took meanwhile (ms), with a
    churning process beside it (none when `churn_env` is None)."""
    churn = None
    if churn_env is not None:
        churn = subprocess.Popen([sys.executable, "-c", CHURN], env={**os.environ, **churn_env})
        time.sleep(0.3)
    before = stolen_ms()
    try:
        out = subprocess.run([sys.executable, "-c", BYSTANDER, str(seconds)], capture_output=True, text=True)
    finally:
        if churn is not None:
            churn.kill()
            churn.wait()
    worst, over = out.stdout.split()
    return float(worst), int(over), stolen_ms() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--pause", type=float, default=5.0, help="seconds between the free and the fill")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0, help="how long the bystander loop runs")
    args = parser.parse_args()
    print(f"touch: filling {args.gib:g} GiB of new memory in a fresh process, after another freed as much")
    for round_ in range(args.rounds):
        fill(args.gib)
        at_once = fill(args.gib)
        time.sleep(args.pause)
        later = fill(args.gib)
        print(
            f"  round {round_ + 1}: at once {at_once:.2f} s ({at_once / args.gib:.2f} s/GiB); "
            f"{args.pause:g} s later {later:.2f} s ({later / args.gib:.2f} s/GiB)"
        )
    keeping = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}
    cases = {
        "alone": None,
        "beside a process freeing 512 MiB again and again": {},
        "beside the same process keeping what it frees": keeping,
    }
    print(f"bystander: a pure-Python loop's worst gap over {args.seconds:g} s")
    for round_ in range(args.rounds):
        for name, env in cases.items():
            settle(3.0)
            worst, over, host = bystander(args.seconds, env)
            print(f"  round {round_ + 1}, {name:<49}: worst {worst:6.1f} ms, {over} over 16 ms, host {host:.0f} ms")


if __name__ == "__main__":
    main()
