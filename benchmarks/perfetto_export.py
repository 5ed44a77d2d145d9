"""`graphscope export FILE -o trace.json` (Perfetto) against a plain writer of the same JSON
(benchmarks/plain_perfetto_writer.py: SQLite rows streamed, one json.dumps per event), and `.json.gz`.

Fresh processes, interleaved rounds, `--no-cache` (each reads its file, as a first export does), each
started after the host took back what the previous one freed (host_memory.settle); seconds and peak
resident memory of each process (wait4's ru_maxrss), and the output's size.

    python benchmarks/perfetto_export.py [--kernels 1000000] [--rounds 3]

Target (issue 26): at most the time and the memory of the plain writer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from host_memory import settle
from ingest_floor import timed
from synthetic_export import ensure

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between runs")
    args = parser.parse_args()
    path = ensure(args.kernels)
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {name: Path(tmp) / name for name in ("plain.json", "graphscope.json", "graphscope.json.gz")}
        export = [sys.executable, "-m", "graphscope", "export", "--no-cache", str(path), "-o"]
        plain = [sys.executable, str(HERE / "plain_perfetto_writer.py"), str(path), str(outputs["plain.json"])]
        cases = {
            "plain writer": plain,
            "graphscope export -o trace.json": [*export, str(outputs["graphscope.json"])],
            "graphscope export -o trace.json.gz": [*export, str(outputs["graphscope.json.gz"])],
        }
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.rounds):  # interleaved, so machine noise hits every case
            for name, command in cases.items():
                settle(args.settle)
                seen[name].append(timed(command))
        sizes = {name: output.stat().st_size / 1e6 for name, output in zip(cases, outputs.values())}
    print(f"{path.name}: medians of {args.rounds} interleaved rounds, fresh processes")
    plain_s = statistics.median(s for s, _ in seen["plain writer"])
    plain_gib = statistics.median(g for _, g in seen["plain writer"])
    for name, runs in seen.items():
        s, gib = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        spread = f"{min(r[0] for r in runs):.2f}-{max(r[0] for r in runs):.2f} s"
        print(
            f"  {name:<36} {s:6.2f} s ({spread}, {s / plain_s:.2f}x)  {gib:.3f} GiB ({gib / plain_gib:.2f}x)  "
            f"{sizes[name]:.0f} MB"
        )


if __name__ == "__main__":
    main()
