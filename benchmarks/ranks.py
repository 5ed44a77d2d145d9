"""A rank job three ways, in fresh processes, interleaved: a serial loop, a plain process pool, graphscope's job.

Sets (made once under benchmarks/out/ranks/, from shipped real traces):
  nsysN    N copies of tests/data/h200_seed_vecadd_node.sqlite (a real H200 Nsight export), rank{r}.sqlite
  kinetoN  N variants of tests/data/kineto/hta__trace_diff_control_eager.json.gz (HTA's real 109k-event
           PyTorch-profiler trace) whose distributedInfo says rank r of N, rank{r}.json.gz
  bigN     (--big) N copies of the generator's synthetic_1000000.sqlite (1M kernels + 1M API rows)

Each is analysed, in a fresh process each time, by
  serial   graphscope.ranks.job.analyse_serially: rank_rows on each file in turn, in one process
  pool     a plain multiprocessing.Pool(cores).map(rank_rows, files), then the same job_of_rows
  job      graphscope.ranks.job.analyse_job([folder]) with no options (what `summary FOLDER` runs)
in rotating order within each round. Reported per set: median wall of each (process start to exit), CPU
(user+sys of the whole process tree), the speed-up of pool and job over serial (medians of each round's
ratio), ours / the pool's, and the whole job's peak memory: the peak of the summed resident memory of the
process tree (sampled every 10 ms from /proc) and the sum of every process's own peak (VmHWM: an upper
bound, the processes need not peak together), each against the serial loop's. The three results are
checked to be identical (the job's `engine` record aside). Results go to benchmarks/out/ranks.json.

    python benchmarks/ranks.py [--rounds 5] [--sets nsys2,nsys4,nsys8,kineto2,kineto4,kineto8] [--big]
    python benchmarks/ranks.py --sets "" --big [--threads 2]   (the job's workers with 2 SQLite threads each)
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SETS = OUT / "ranks"
NSIGHT = ROOT / "tests" / "data" / "h200_seed_vecadd_node.sqlite"
KINETO = ROOT / "tests" / "data" / "kineto" / "hta__trace_diff_control_eager.json.gz"
BIG = OUT / "synthetic_1000000.sqlite"
MODES = ("serial", "pool", "job")

CODE = """
import hashlib, json, os, sys
from pathlib import Path
mode, folder = sys.argv[1], Path(sys.argv[2])
if __name__ == "__main__":
    from graphscope.ranks.job import analyse_job, analyse_serially, job_of_rows, rank_files, rank_rows
    if mode == "serial":
        job = analyse_serially([folder])
    elif mode == "pool":
        import multiprocessing
        files = [str(p) for p in rank_files([folder])]
        with multiprocessing.Pool(len(os.sched_getaffinity(0))) as pool:
            rows = [row for rows in pool.map(rank_rows, files, chunksize=1) for row in rows]
        job = job_of_rows(rows)
        job["skipped"] = []
    else:
        if os.environ.get("RANKS_BENCH_THREADS"):  # --threads: each worker's SQLite threads (not cores // workers)
            import graphscope.ranks.pool as pool
            workers = min(len(os.sched_getaffinity(0)), len(rank_files([folder])))
            pool.cores = lambda: int(os.environ["RANKS_BENCH_THREADS"]) * workers
        job = analyse_job([folder])
        from multiprocessing import forkserver
        if getattr(forkserver, "_forkserver", None) is not None and hasattr(forkserver._forkserver, "_stop"):
            forkserver._forkserver._stop()  # reaped, so that its workers' CPU counts in this process tree's
    engine = job.pop("engine", None)
    text = json.dumps(job, sort_keys=True)
    print(json.dumps({"digest": hashlib.sha256(text.encode()).hexdigest(), "verdict": job["verdict"][:80],
                      "engine": engine}))
"""


def make_sets(names: list[str]) -> None:
    """The rank folders named, made where missing (a set is made in a scratch folder, then renamed)."""
    for name in names:
        folder = SETS / name
        if folder.is_dir():
            continue
        count = int(name.removeprefix("nsys").removeprefix("kineto").removeprefix("big"))
        scratch = SETS / f".{name}.making"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        if name.startswith(("nsys", "big")):
            source = NSIGHT if name.startswith("nsys") else BIG
            for rank in range(count):
                shutil.copyfile(source, scratch / f"rank{rank}.sqlite")
        else:
            document = json.loads(gzip.decompress(KINETO.read_bytes()))
            for rank in range(count):
                document["distributedInfo"].update(rank=rank, world_size=count)
                (scratch / f"rank{rank}.json.gz").write_bytes(gzip.compress(json.dumps(document).encode(), 6))
        scratch.rename(folder)


def _tree(pid: int) -> list[int]:
    """pid and its descendants (Linux /proc children files)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return found


def _status_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB; zeros once it is gone."""
    rss = hwm = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


def _pss_kib(pid: int) -> int:
    """Proportional set size of a process in KiB (pages shared with its fork server counted once in all)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(mode: str, folder: Path) -> dict:
    """One fresh process analysing `folder` the `mode` way: wall, CPU of its tree, memory, result digest."""
    env = {**os.environ, "GRAPHSCOPE_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CODE, mode, str(folder)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    peaks: dict[int, int] = {}
    summed = [0, 0]

    def sample() -> None:
        while child.poll() is None:
            total = pss = 0
            for pid in _tree(child.pid):
                rss, hwm = _status_kib(pid)
                total += rss
                pss += _pss_kib(pid)
                peaks[pid] = max(peaks.get(pid, 0), hwm)
            summed[0], summed[1] = max(summed[0], total), max(summed[1], pss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        raise SystemExit(f"{mode} {folder}: exit {child.returncode}\n{err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "peak_sum_gib": summed[0] / 2**20, "pss_sum_gib": summed[1] / 2**20,
            "hwm_sum_gib": sum(peaks.values()) / 2**20, "processes": len(peaks), **result}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sets", default="nsys2,nsys4,nsys8,kineto2,kineto4,kineto8")
    parser.add_argument("--big", action="store_true", help="also big2,big4,big8 (1M + 1M-row synthetic exports)")
    parser.add_argument("--threads", type=int, help="the job's workers read SQLite with this many threads each")
    args = parser.parse_args()
    names = [n for n in args.sets.split(",") if n] + (["big2", "big4", "big8"] if args.big else [])
    if args.threads:
        os.environ["RANKS_BENCH_THREADS"] = str(args.threads)
    make_sets(names)
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores, load average {os.getloadavg()[0]:.2f} at the start; {args.rounds} rounds", flush=True)
    runs: dict[str, dict[str, list[dict]]] = {n: {m: [] for m in MODES} for n in names}
    for round_ in range(args.rounds):
        for name in names:
            order = MODES[round_ % 3:] + MODES[: round_ % 3]  # each mode first in a third of the rounds
            for mode in order:
                runs[name][mode].append(measure(mode, SETS / name))
            digests = {m: runs[name][m][-1]["digest"] for m in MODES}
            if len(set(digests.values())) != 1:
                raise SystemExit(f"{name}: the three results differ: {digests}")
    report = {"cores": cores, "rounds": args.rounds, "threads": args.threads, "sets": {}}
    for name in names:
        r = runs[name]

        def med(mode: str, key: str) -> float:
            return statistics.median(x[key] for x in r[mode])  # noqa: B023

        def ratio(num: str, den: str) -> float:
            return statistics.median(a["wall_s"] / b["wall_s"] for a, b in zip(r[num], r[den]))  # noqa: B023

        row = {
            **{f"{m}_wall_s": med(m, "wall_s") for m in MODES},
            **{f"{m}_cpu_s": med(m, "cpu_s") for m in MODES},
            **{f"{m}_peak_sum_gib": med(m, "peak_sum_gib") for m in MODES},
            **{f"{m}_hwm_sum_gib": med(m, "hwm_sum_gib") for m in MODES},
            **{f"{m}_pss_sum_gib": med(m, "pss_sum_gib") for m in MODES},
            "pool_speedup": ratio("serial", "pool"),
            "job_speedup": ratio("serial", "job"),
            "job_over_pool": ratio("pool", "job"),  # our speed-up / the pool's, round by round
            "job_engine": r["job"][-1]["engine"],
            "verdict": r["job"][-1]["verdict"],
        }
        report["sets"][name] = row
        engine = row["job_engine"]
        print(
            f"{name:8} serial {row['serial_wall_s']:5.2f} s cpu {row['serial_cpu_s']:5.2f} | "
            f"pool {row['pool_wall_s']:5.2f} s cpu {row['pool_cpu_s']:5.2f} {row['pool_speedup']:.2f}x | "
            f"job {row['job_wall_s']:5.2f} s cpu {row['job_cpu_s']:5.2f} {row['job_speedup']:.2f}x "
            f"({engine['scheduler']}, {engine['workers']}) | job/pool {row['job_over_pool']:.2f} | "
            f"whole-job peak, RSS (PSS): serial {row['serial_peak_sum_gib']:.3f} ({row['serial_pss_sum_gib']:.3f}) "
            f"GiB, pool {row['pool_peak_sum_gib'] / row['serial_peak_sum_gib']:.2f}x "
            f"({row['pool_pss_sum_gib'] / row['serial_pss_sum_gib']:.2f}x), "
            f"job {row['job_peak_sum_gib'] / row['serial_peak_sum_gib']:.2f}x "
            f"({row['job_pss_sum_gib'] / row['serial_pss_sum_gib']:.2f}x)",
            flush=True,
        )
    report["load_end"] = os.getloadavg()[0]
    (OUT / "ranks.json").write_text(json.dumps(report, indent=2))
    print(f"load average {report['load_end']:.2f} at the end; written to {OUT / 'ranks.json'}")


if __name__ == "__main__":
    main()
