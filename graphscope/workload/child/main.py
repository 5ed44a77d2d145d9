"""The workload child process: `python -m graphscope.workload.child [--batch REQUESTS RESULTS]`.

User code runs only here, never in the GUI or CLI process. The parent sends one JSON request per
line on stdin and reads one JSON response per line from a private copy of stdout; the workload's own
prints go to stderr. With --batch the requests come from a file and the responses go to one (used
under Nsight Systems, which owns the terminal).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

from graphscope.core.launch_config import LaunchConfig
from graphscope.workload.protocol import INSTALL_HINTS, PROTOCOL_VERSION, MissingLibrary, classify, decode, encode

GPU_LIBRARIES = ("cupy", "cupy_backends", "cuda")
NO_GPU_MARKERS = (
    "CUDA driver",
    "no CUDA-capable device",
    "cudaErrorNoDevice",
    "cudaErrorInsufficientDriver",
    "libcuda.so",
    "CUDA_ERROR_NO_DEVICE",
)


class Child:
    """Dispatches requests to the live workload and turns every failure into a named error."""

    def __init__(self) -> None:
        self.live: Any = None
        self.capturing = False
        self.workload_file = ""

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request, with Python's cycle collector off while it runs: a collection that starts inside a
        timed loop scans the whole heap of CuPy or PyTorch and lands in the figure (on an H200 host, the
        first in-place apply of 1000 nodes took 20-31 ms against 5-6 ms for the next ones: a 17 ms
        generation-2 collection and seven 1-2 ms younger ones ran inside it; gc callbacks, cProfile). It
        runs between requests instead, over what the workload made since it loaded (see `do_load`)."""
        command = request.get("command")
        handler = getattr(self, f"do_{command}", None)
        if handler is None:
            return {"ok": False, "error": {"kind": "bad_request", "message": f"unknown command {command!r}"}}
        was_on = gc.isenabled()
        gc.disable()
        try:
            return {"ok": True, "result": handler(request)}
        except (Exception, SystemExit) as exc:  # the workload's failures: report them, never crash silently
            return {"ok": False, "error": self._error(exc)}
        finally:
            self.capturing = False
            if was_on:
                gc.enable()

    def _error(self, exc: BaseException) -> dict[str, Any]:
        from graphscope.workload.child.live import BadWorkload

        text = str(exc)
        missing_gpu_library = isinstance(exc, ImportError) and getattr(exc, "name", "") in GPU_LIBRARIES
        missing = (getattr(exc, "name", "") or "").split(".")[0] if isinstance(exc, ImportError) else ""
        if missing in INSTALL_HINTS:
            kind, exc = "missing_library", MissingLibrary(f"the workload imports {missing}: {INSTALL_HINTS[missing]}")
        elif isinstance(exc, BadWorkload):
            kind = "bad_workload"
        elif missing_gpu_library or any(marker in text for marker in NO_GPU_MARKERS):
            kind = "no_gpu"
        else:
            kind = classify(exc, self.capturing)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == self.workload_file]
        where = f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""
        message = f"{type(exc).__name__}: {exc}".strip().splitlines()[0] + where
        return {"kind": kind, "message": message, "traceback": "".join(traceback.format_exception(exc))[-6000:]}

    def do_hello(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"protocol": PROTOCOL_VERSION, "pid": os.getpid(), "python": sys.version.split()[0]}

    def do_load(self, request: dict[str, Any]) -> dict[str, Any]:
        from graphscope.workload.child.environment import environment
        from graphscope.workload.child.live import LiveWorkload

        config = LaunchConfig.from_json(request["config"]) if request.get("config") else None
        path = Path(request["path"]).resolve()
        self.workload_file = str(path)
        self.live = LiveWorkload(path, config, request.get("sizes"))
        gc.collect()  # what set-up left as garbage; then the libraries, the model and its buffers, which
        gc.freeze()  # live as long as the workload, are left out of every later collection
        return {
            "sites": [s.to_json() for s in self.live.eager_sites],
            "outputs": sorted(self.live.reference),
            "environment": environment(),
            "sizes": self.live.sizes,
        }

    def do_own_cost(self, request: dict[str, Any]) -> dict[str, Any]:
        """What graphscope's launch path adds to each eager step (workload/child/own_cost.py): asked for by
        `run` only, so tuning and planning sessions do not spend the measurement at every load."""
        return {"own_cost": self.live.fw.own_cost()}

    def do_sizes(self, request: dict[str, Any]) -> dict[str, Any]:
        """One graph per batch size (workload/child/sizes.py)."""
        from graphscope.workload.child.sizes import measure_sizes

        self.capturing = True
        sizes = [int(s) for s in request.get("sizes") or self.live.sizes]
        if not sizes:
            raise ValueError("the workload declares no SIZES and none were given (--sizes 1,2,4,8)")
        return measure_sizes(
            self.live, sizes, int(request["reps"]), int(request.get("warmup", 3)), request.get("order", "largest")
        )

    def do_serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """A recorded sequence of request sizes through the captured sizes (workload/child/serve.py)."""
        from graphscope.workload.child.serve import serve

        self.capturing = True
        return serve(
            self.live,
            [int(s) for s in request["captured"]],
            [int(s) for s in request["requests"]],
            int(request.get("warmup", 3)),
        )

    def do_measure(self, request: dict[str, Any]) -> dict[str, Any]:
        self.capturing = request["mode"] == "graph" and (self.live.graph is None or request.get("fresh", False))
        return self.live.measure(
            request["mode"],
            int(request["reps"]),
            int(request.get("warmup", 3)),
            bool(request.get("nvtx", False)),
            bool(request.get("fresh", False)),
        )

    def do_profile_torch(self, request: dict[str, Any]) -> dict[str, Any]:
        """One mode measured under torch.profiler, its trace written where asked (workload/child/torch_profile.py)."""
        from graphscope.workload.child.torch_profile import profile_measure

        self.capturing = request["mode"] == "graph"
        mode, reps, warmup = request["mode"], int(request["reps"]), int(request.get("warmup", 3))
        return profile_measure(self.live, mode, reps, warmup, Path(request["trace"]))

    def do_capture(self, request: dict[str, Any]) -> dict[str, Any]:
        self.capturing = True
        config = LaunchConfig.from_json(request["config"]) if request.get("config") else self.live.ctx.config
        return self.live.recapture(config)

    def do_dag(self, request: dict[str, Any]) -> dict[str, Any]:
        self.capturing = self.live.graph is None
        return self.live.dag()

    def do_pdl_edges(self, request: dict[str, Any]) -> dict[str, Any]:
        """The graph replayed with its programmatic edges made plain, each alone and all (workload/child/pdl.py)."""
        from graphscope.workload.child.pdl import edge_replays

        return edge_replays(self.live, int(request["reps"]), int(request.get("warmup", 3)), request.get("edges"))

    def do_apply(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.live.apply(LaunchConfig.from_json(request["config"]), bool(request.get("force", False)))

    def do_alone(self, request: dict[str, Any]) -> dict[str, Any]:
        """A knob's blocks, each with its kernel timed alone (in-graph vs isolated, tune/isolation.py)."""
        blocks = [tuple(int(v) for v in b) for b in request["blocks"]]
        answers = self.live.alone(request["knob"], blocks, int(request["reps"]), int(request.get("warmup", 3)))
        return {"alone": answers}

    def do_scrubbed(self, request: dict[str, Any]) -> dict[str, Any]:
        """One replay after every SM's shared memory was filled with NaN (workload/child/scrub.py)."""
        from graphscope.workload.child.scrub import scrubbed_replay

        return scrubbed_replay(self.live)

    def do_diverge(self, request: dict[str, Any]) -> dict[str, Any]:
        """Where the graph's outputs depart from eager's: the first differing node (diverge_search.py)."""
        from graphscope.workload.child.diverge_gpu import attribute
        from graphscope.workload.child.diverge_search import diverge

        self.capturing = self.live.graph is None
        result = diverge(self.live)
        self.capturing = False
        why = attribute(self.live, result.get("graph_launches") or [])  # the node's module and operator
        if why:
            result["attribution"] = f"no operator attribution: torch.profiler failed ({why})"
        return result

    def do_audit(self, request: dict[str, Any]) -> dict[str, Any]:
        """The frozen-at-capture audit: the graph against a capture at a second state (diverge_audit.py)."""
        from graphscope.workload.child.diverge_audit import audit_graph

        self.capturing = True
        return audit_graph(self.live)

    def do_shutdown(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"bye": True}


def _claim_stdout() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 then points at stderr for the workload's prints."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout.flush()
    os.dup2(2, 1)
    return protocol


def serve(requests: TextIO, responses: TextIO) -> None:
    child = Child()
    for line in requests:
        if not line.strip():
            continue
        request = decode(line)
        response = child.handle(request)
        responses.write(encode(response))
        responses.flush()
        if request.get("command") == "shutdown":
            break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphscope.workload.child")
    parser.add_argument("--batch", nargs=2, type=Path, metavar=("REQUESTS", "RESPONSES"))
    args = parser.parse_args(argv)
    pin = os.environ.get("GRAPHSCOPE_PIN_CPU")
    if pin:
        os.sched_setaffinity(0, {int(pin)})
    if args.batch:
        requests, responses = args.batch
        with open(requests) as source, open(responses, "w") as sink:
            serve(source, sink)
        return 0
    serve(sys.stdin, _claim_stdout())
    return 0
