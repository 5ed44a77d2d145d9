"""What this machine charges for touching memory: a fresh process fills N GiB of new memory, once right
after another process freed the same amount, once after a pause. On a virtual machine whose host takes
back the memory its guest frees (Firecracker's free page reporting, a balloon), the second costs several
times more: the host backs every page again. Also printed: what the host took of the machine's cores
meanwhile ('steal' in /proc/stat), which benchmarks/frames_while_loading.py --blame prints for its slow
frames.

    python benchmarks/first_touch.py [--gib 4] [--pause 5] [--rounds 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

FILL = """
import os, sys, time
import numpy as np
def stolen():
    with open("/proc/stat") as stat:
        return int(stat.readline().split()[8]) * 1000 / os.sysconf("SC_CLK_TCK")
n = int(float(sys.argv[1]) * 2**30) // 8
before, t = stolen(), time.perf_counter()
memory = np.empty(n)
for start in range(0, n, 1 << 24):
    memory[start:start + (1 << 24)] = 1.0
print(f"{time.perf_counter() - t:.2f} {stolen() - before:.0f}")
"""


def fill(gib: float) -> tuple[float, float]:
    """Seconds to fill `gib` GiB in a fresh process, and ms the host took of the machine's cores meanwhile."""
    out = subprocess.run([sys.executable, "-c", FILL, str(gib)], capture_output=True, text=True, check=True)
    seconds, stolen = out.stdout.split()
    return float(seconds), float(stolen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--pause", type=float, default=5.0, help="seconds between the free and the fill")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"filling {args.gib:g} GiB of new memory in a fresh process, after another freed as much:")
    for round_ in range(args.rounds):
        fill(args.gib)
        at_once = fill(args.gib)
        time.sleep(args.pause)
        later = fill(args.gib)
        print(
            f"  round {round_ + 1}: at once {at_once[0]:.2f} s ({at_once[0] / args.gib:.2f} s/GiB, host took "
            f"{at_once[1]:.0f} ms); {args.pause:g} s later {later[0]:.2f} s ({later[0] / args.gib:.2f} s/GiB, "
            f"host took {later[1]:.0f} ms)"
        )


if __name__ == "__main__":
    main()
