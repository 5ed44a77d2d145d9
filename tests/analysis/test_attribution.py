"""Every replayed node gets its operator, module, shapes, user line and capture: hand-made Kineto pairs
with the awkward cases (sizes of one shape, missing nodes, several graphs a step, ranks), each checked
against a plain count over the JSON written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from graphscope.analysis.attribution import is_user_frame
from graphscope.analysis.capture_ops import attribute
from graphscope.cli import main
from graphscope.trace import load_trace

USER = "model.py(42): forward"
LAUNCHER = "vllm/v1/worker/gpu_model_runner.py(1800): execute_model"  # the engine, not the model
TORCH = "torch/nn/modules/linear.py(125): forward"
TRITON = "triton/backends/amd/driver.py(634): __call__"  # the innermost frame of most real rows


class Trace(list):
    """Kineto events written by hand: captures (frames, modules, operators with shapes around each
    launch) and graph replays (one cudaGraphLaunch and the kernels it ran)."""

    def __init__(self, rank: int | None = None) -> None:
        super().__init__()
        self.t, self.corr, self.rank = 0.0, 1, rank

    def _x(self, cat: str, name: str, ts: float, dur: float, **args) -> None:
        gpu = cat in ("kernel", "gpu_memset", "gpu_memcpy")
        where = {"pid": 0, "tid": 7} if gpu else {"pid": 10, "tid": 1}
        self.append({"ph": "X", "cat": cat, "name": name, **where, "ts": ts, "dur": dur, "args": args})

    def capture(self, calls: list[dict]) -> None:
        """A stream capture: per call {"op", "modules", "dims", "kind"} under the user's frame and the
        engine's launcher; each call's own frames are torch's, then triton's (innermost)."""
        start = self.t
        self._x("python_function", LAUNCHER, start, 1000 * (len(calls) + 2))
        self._x("python_function", USER, start + 1, 1000 * (len(calls) + 2) - 2)
        self._x("cuda_runtime", "cudaStreamBeginCapture", start + 2, 1, correlation=self._next())
        t = start + 10
        for call in calls:
            modules = call.get("modules", [])
            for depth, module in enumerate(modules):  # outer first, nested
                self._x("python_function", f"nn.Module: {module}", t + depth, 900 - 2 * depth)
            inner = t + len(modules)
            self._x("python_function", TORCH, inner, 800)
            dims = call.get("dims")
            types = call.get("types") or ["float"] * len(dims or [])
            op_args = {"Input Dims": dims, "Input type": types} if dims else {}
            self._x("cpu_op", call["op"], inner + 1, 700, **op_args)
            self._x("python_function", TRITON, inner + 2, 600)
            name = {"kernel": "cudaLaunchKernel", "memset": "cudaMemsetAsync", "memcpy": "cudaMemcpyAsync"}
            self._x("cuda_runtime", name[call.get("kind", "kernel")], inner + 3, 5, correlation=self._next())
            t += 1000
        self._x("cuda_runtime", "cudaStreamEndCapture", t, 1, correlation=self._next())
        self.t = t + 2000

    def replay(self, kernels: list[tuple[str, int, float]], memsets: int = 0) -> None:
        """One graph launch: kernels (name, grid x, duration us) in order, then `memsets` memsets."""
        corr = self._next()
        self._x("cuda_runtime", "cudaGraphLaunch", self.t, 5, correlation=corr)
        t = self.t + 10
        for name, grid, dur in kernels:
            self._x("kernel", name, t, dur, device=0, stream=7, correlation=corr, grid=[grid, 1, 1], block=[128, 1, 1])
            t += dur + 1
        for _ in range(memsets):
            self._x("gpu_memset", "Memset (Device)", t, 1.5, device=0, stream=7, correlation=corr, bytes=64)
            t += 3
        self.t = t + 100

    def _next(self) -> int:
        self.corr += 1
        return self.corr

    def write(self, path: Path) -> Path:
        document = {"traceEvents": list(self)}
        if self.rank is not None:
            document["distributedInfo"] = {"rank": self.rank, "world_size": 2}
        with gzip.open(path, "wt") as stream:
            json.dump(document, stream)
        return path


def _kernel_ns(trace: Trace, names: set[str] | None = None) -> int:
    """The second way: replayed kernel time summed from the JSON itself."""
    return sum(round(e["dur"] * 1000) for e in trace if e["cat"] == "kernel" and (names is None or e["name"] in names))


DECODER = [
    {"op": "aten::mm", "modules": ["Decoder_0", "Layer_0", "Linear_0"], "dims": [[4, 16], [16, 16]]},
    {"op": "aten::add", "modules": ["Decoder_0", "Layer_0"], "dims": [[4, 16], [4, 16]]},
    {"op": "aten::mm", "modules": ["Decoder_0", "Layer_0", "Linear_1"], "dims": [[4, 16], [16, 16]]},
]


def test_a_decoder_s_kernels_get_op_module_shapes_and_the_user_line(tmp_path):
    trace = Trace()
    trace.capture(DECODER)
    for _ in range(3):
        trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = trace.write(tmp_path / "t.json.gz")
    found = attribute(load_trace(path), stacks=True)
    assert found["note"] is None and [g["match"] for g in found["graphs"]] == ["exact"]
    nodes = found["nodes"]
    assert [n["operator"] for n in nodes] == ["aten::mm", "aten::add", "aten::mm"]
    layer = "Decoder_0.Layer_0"
    assert [n["module"] for n in nodes] == [f"{layer}.Linear_0", layer, f"{layer}.Linear_1"]
    assert nodes[0]["shapes"] == "float[4, 16], float[16, 16]"
    assert {n["frame"] for n in nodes} == {USER}  # not triton's innermost frame, not torch's, not vLLM's runner
    assert nodes[0]["stack"].splitlines() == [LAUNCHER, USER, TORCH, TRITON]  # outermost first, whole
    assert found["coverage"] == {"gpu_ns": _kernel_ns(trace)} | dict.fromkeys(
        ("operator", "module", "shapes", "frame", "api", "capture"), 1.0
    )
    by_module = {m["module"]: m["gpu_ns"] for m in found["modules"]}
    assert by_module["Decoder_0.Layer_0.Linear_1"] == 3 * 12_000 == _kernel_ns(trace, {"gemm"}) - 3 * 10_000
    assert sum(by_module.values()) == _kernel_ns(trace)


def test_graphs_of_one_shape_captured_at_two_sizes_are_paired_by_size(tmp_path):
    """Batch 4 and batch 8 captured (same operators, other shapes); the replay runs both graphs (their
    GEMM tiles differ): each graph gets its own capture's shapes, the larger grid the larger batch."""
    trace = Trace()
    small = [dict(c) for c in DECODER]
    large = [dict(c, dims=[[8, 16], d[1]]) for c, d in zip(DECODER, (c["dims"] for c in DECODER), strict=True)]
    trace.capture(large)  # vLLM captures the largest size first
    trace.capture(small)
    trace.replay([("gemm_small", 4, 5.0), ("add", 2, 1.0), ("gemm_small", 4, 5.0)])
    trace.replay([("gemm_large", 8, 9.0), ("add", 4, 2.0), ("gemm_large", 8, 9.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    by_graph = {}
    for node in found["nodes"]:
        by_graph.setdefault(node["graph"], []).append(node)
    shapes = {g: nodes[0]["shapes"] for g, nodes in by_graph.items()}
    assert shapes == {1: "float[4, 16], float[16, 16]", 2: "float[8, 16], float[16, 16]"}
    assert {g["graph"]: g["capture"] for g in found["graphs"]} == {1: 1, 2: 0}  # the captures in time order
    assert found["coverage"]["shapes"] == 1.0


def test_one_graph_for_two_sizes_keeps_what_the_sizes_agree_on(tmp_path):
    """The same kernels at both sizes are one graph to the replay: shapes differ, so they stay unknown;
    operator, module and frame agree and are kept."""
    trace = Trace()
    trace.capture([dict(c, dims=[[8, 16], [16, 16]]) for c in DECODER])
    trace.capture(DECODER)
    trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    assert found["graphs"][0]["capture"] is None and found["graphs"][0]["candidates"] == [0, 1]
    assert [n["shapes"] for n in found["nodes"]] == [None, None, None]
    assert [n["operator"] for n in found["nodes"]] == ["aten::mm", "aten::add", "aten::mm"]
    assert found["coverage"]["shapes"] == 0.0 and found["coverage"]["module"] == 1.0


def test_a_replay_missing_nodes_still_matches_where_the_placement_is_sure(tmp_path, capsys):
    """The capture made kernel, memset, kernel, kernel; the profiler recorded no memset in the replay and
    lost nothing else: the three kernels are placed for sure. A second graph lost one of three kernels
    of different operators: no kernel's operator is sure, the graph is matched and says why."""
    trace = Trace()
    trace.capture([DECODER[0], {"op": "aten::zero_", "kind": "memset", "dims": [[4, 16]]}, DECODER[1], DECODER[2]])
    trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    (graph,) = found["graphs"]
    assert graph["match"] == "nodes missing from the replay" and found["unmatched"] == []
    assert [n["operator"] for n in found["nodes"]] == ["aten::mm", "aten::add", "aten::mm"]
    assert found["nodes"][1]["module"] == "Decoder_0.Layer_0"
    assert main(["summary", str(tmp_path / "t.json.gz"), "--no-cache"]) == 0
    assert "1 graph(s) matched with nodes missing from the replay" in capsys.readouterr().out

    other = Trace()
    gelu = {"op": "aten::gelu", "modules": ["Decoder_0", "Layer_0"], "dims": [[4, 16]]}
    other.capture([DECODER[0], DECODER[1], gelu])
    other.replay([("gemm", 8, 10.0), ("gelu", 4, 3.0)])  # which of the three is lost is not known
    found = attribute(load_trace(other.write(tmp_path / "o.json.gz")), stacks=True)
    assert [n["operator"] for n in found["nodes"]] == [None, None]
    # node 1 is add's call or gelu's: both inside Decoder_0.Layer_0; node 0 is mm's (Linear_0) or add's
    assert [n["module"] for n in found["nodes"]] == [None, "Decoder_0.Layer_0"]
    assert [n["frame"] for n in found["nodes"]] == [USER, USER]  # every call agrees on the line


def test_a_capture_missing_calls_fills_the_nodes_placed_for_sure(tmp_path):
    trace = Trace()
    trace.capture([DECODER[0], DECODER[1]])  # the third launch (a driver call, say) was not recorded
    trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    assert found["graphs"][0]["match"] == "calls missing from the capture"
    # kinds are all kernels: placements [0,1] and [1,2] disagree on every node
    assert [n["operator"] for n in found["nodes"]] == [None, None, None]
    assert found["coverage"]["frame"] == 0.0


def test_several_graphs_a_step_each_find_their_capture(tmp_path):
    """Two graphs a step (an attention piece of 2 kernels, an MLP piece of 3), five steps."""
    trace = Trace()
    trace.capture([DECODER[0], {"op": "aten::softmax", "modules": ["Decoder_0", "Attn_0"], "dims": [[4, 4]]}])
    trace.capture([DECODER[1], DECODER[2], {"op": "aten::gelu", "modules": ["Decoder_0", "Mlp_0"], "dims": [[4, 16]]}])
    for _ in range(5):
        trace.replay([("gemm", 8, 10.0), ("softmax", 2, 3.0)])
        trace.replay([("add", 4, 2.0), ("gemm", 8, 12.0), ("gelu", 4, 4.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")))
    assert {g["graph"]: g["capture"] for g in found["graphs"]} == {1: 0, 2: 1}
    ops = {o["operator"]: o for o in found["operators"]}
    assert ops["aten::softmax"]["gpu_ns"] == _kernel_ns(trace, {"softmax"}) == 5 * 3000
    assert ops["aten::softmax"]["activities"] == sum(e["name"] == "softmax" for e in trace)
    assert found["coverage"]["operator"] == 1.0


def test_vllm_layout_one_capture_file_per_size_and_rank_in_a_folder(tmp_path, capsys):
    """A folder of capture files (two sizes x two ranks); the replay is rank 1's: rank 0's captures,
    whose module names differ (a sharded layer), are left out."""
    folder = tmp_path / "captures"
    folder.mkdir()
    for rank in (0, 1):
        for batch in (4, 8):
            capture = Trace(rank)
            capture.capture([dict(c, dims=[[batch, 16], [16, 16]], modules=[f"Rank{rank}_0"]) for c in DECODER])
            capture.write(folder / f"capture_bs{batch}_rank{rank}.json.gz")
    (folder / "notes.txt").write_text("not a trace")  # a folder's other files are not read
    replay = Trace(1)
    for _ in range(2):
        replay.replay([("gemm_small", 4, 5.0), ("add", 2, 1.0), ("gemm_small", 4, 5.0)])
        replay.replay([("gemm_large", 8, 9.0), ("add", 4, 2.0), ("gemm_large", 8, 9.0)])
    path = replay.write(tmp_path / "replay.json.gz")
    assert main(["summary", str(path), "--capture", str(folder), "--json", "--stacks", "--no-cache"]) == 0
    found = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert {c["rank"] for c in found["captures"]} == {"1"} and len(found["captures"]) == 2
    assert {n["module"] for n in found["nodes"]} == {"Rank1_0"}
    assert {n["graph"]: n["shapes"] for n in found["nodes"] if n["index"] == 0} == {
        1: "float[4, 16], float[16, 16]",
        2: "float[8, 16], float[16, 16]",
    }
    assert found["coverage"]["gpu_ns"] == _kernel_ns(replay)
    # the same files named one by one answer the same
    files = sorted(folder.glob("*.json.gz"))
    assert main(["summary", str(path), *(f"--capture={f}" for f in files), "--json", "--no-cache"]) == 0
    again = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert again["operators"] == found["operators"]


def test_the_text_summary_shows_modules_and_coverage(tmp_path, capsys):
    trace = Trace()
    trace.capture(DECODER)
    trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    assert main(["summary", str(trace.write(tmp_path / "t.json.gz")), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "Time by module inside graphs" in text and "Decoder_0.Layer_0.Linear_1" in text
    assert "Replay GPU time attributed: operator 100%, module 100%, shapes 100%, frame 100%" in text


@pytest.mark.parametrize(
    ("frame", "user"),
    [
        (USER, True),
        ("transformers/models/llama/modeling_llama.py(300): forward", True),
        ("vllm/model_executor/models/llama.py(210): forward", True),  # vLLM's model code, not its launcher
        (LAUNCHER, False),
        ("sglang/srt/model_executor/cuda_graph_runner.py(500): capture_one_batch_size", False),
        (TORCH, False),
        (TRITON, False),
        ("/opt/conda/lib/python3.12/site-packages/torch/nn/functional.py(12): linear", False),
        ("vllm/_custom_ops.py(120): rms_norm", False),  # vLLM's kernel wrappers
        ("flashinfer/decode.py(900): run", False),
        ("diffusers/models/unets/unet_2d_condition.py(1100): forward", True),
        ("enum.py(1267): __hash__", False),  # the standard library, as Kineto names it
        ("/usr/lib/python3.12/contextlib.py(81): inner", False),
        ("<built-in method relu of type object at 0x7f>", False),
        ("nn.Module: Linear_0", False),
    ],
)
def test_the_user_s_frame_is_outside_libraries_launchers_and_the_standard_library(frame, user):
    assert is_user_frame(frame) is user


def test_graphscope_s_own_module_ranges_name_the_whole_path(tmp_path):
    """`run --profile torch` opens a `module: <path>` range per module call (workload/child/op_attribution.py):
    the innermost one is the node's module, already a whole path; with no operator shapes recorded."""
    trace = Trace()
    calls = [{"op": "aten::mm", "dims": None}, {"op": "aten::gelu", "dims": None}]
    trace.capture(calls)
    t = trace[3]["ts"]  # the first call's frame: put the module ranges around each launch by hand
    for name, start, dur in (("module: model", t - 0.5, 2500), ("module: model.layers.0.mlp", t - 0.2, 900)):
        trace.append({**trace[3], "cat": "user_annotation", "name": name, "ts": start, "dur": dur})
    trace.replay([("gemm", 8, 10.0), ("gelu", 4, 3.0)])
    found = attribute(load_trace(trace.write(tmp_path / "t.json.gz")), stacks=True)
    assert [n["module"] for n in found["nodes"]] == ["model.layers.0.mlp", "model"]
    assert [n["shapes"] for n in found["nodes"]] == [None, None]
    assert found["coverage"]["shapes"] == 0.0 and found["coverage"]["module"] == 1.0


def test_a_report_of_the_trace_has_the_time_by_module_table(tmp_path):
    trace = Trace()
    trace.capture(DECODER)
    for _ in range(4):
        trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = trace.write(tmp_path / "t.json.gz")
    assert main(["report", str(path), "-o", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    (table,) = [t for t in report["tables"] if t["title"].startswith("Time by module inside graphs")]
    raw = {row[0]: row[2] for row in table["raw"]}
    assert raw == {
        "Decoder_0.Layer_0.Linear_1": 4 * 12_000,
        "Decoder_0.Layer_0.Linear_0": 4 * 10_000,
        "Decoder_0.Layer_0": _kernel_ns(trace, {"add"}),
    }
    assert sum(row[3] for row in table["raw"]) == pytest.approx(1.0)
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert "Time by module inside graphs" in (tmp_path / "r.html").read_text()


def test_a_capture_folder_s_other_files_are_skipped_and_said_named_ones_must_read(tmp_path, capsys):
    trace = Trace()
    trace.capture(DECODER)
    folder = tmp_path / "captures"
    folder.mkdir()
    trace.write(folder / "capture.json.gz")
    (folder / "config.json").write_text('{"model": "llama"}')  # an engine's other JSON beside the traces
    replay = Trace()
    replay.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = replay.write(tmp_path / "replay.json.gz")
    assert main(["summary", str(path), "--capture", str(folder), "--json", "--no-cache"]) == 0
    found = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert found["coverage"]["operator"] == 1.0 and len(found["skipped"]) == 1 and "config.json" in found["skipped"][0]
    assert main(["summary", str(path), "--capture", str(folder / "config.json"), "--no-cache"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["summary", str(path), "--capture", str(empty), "--no-cache"]) == 2
    assert "no capture traces" in capsys.readouterr().err


def test_ranks_known_only_from_file_names_still_keep_other_ranks_out(tmp_path, capsys):
    """SGLang-like files without distributedInfo: `..._tp0`, `..._tp1`; the replay's name says tp1."""
    folder = tmp_path / "captures"
    folder.mkdir()
    for rank in (0, 1):
        capture = Trace()
        capture.capture([dict(c, modules=[f"Shard{rank}_0"]) for c in DECODER])
        capture.write(folder / f"cuda_graph_capture_tp{rank}.json.gz")
    replay = Trace()
    replay.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = replay.write(tmp_path / "decode_tp1.json.gz")
    assert main(["summary", str(path), "--capture", str(folder), "--json", "--no-cache"]) == 0
    found = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert [m["module"] for m in found["modules"]] == ["Shard1_0"] and found["coverage"]["module"] == 1.0
    assert [c["rank"] for c in found["captures"]] == ["1"]


def test_capture_with_several_replay_files_is_refused_in_one_line(tmp_path, capsys):
    replay = Trace()
    replay.replay([("gemm", 8, 10.0)])
    a, b = replay.write(tmp_path / "a.json.gz"), replay.write(tmp_path / "b.json.gz")
    assert main(["summary", str(a), str(b), "--capture", str(a)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rank traces" in err


def test_a_kept_summary_answer_is_asked_again_when_a_capture_file_changes(tmp_path, capsys, own_cache):
    replay = Trace()
    replay.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = replay.write(tmp_path / "replay.json.gz")
    folder = tmp_path / "captures"
    folder.mkdir()
    capture = Trace()
    capture.capture(DECODER)
    capture.write(folder / "a.json.gz")
    ask = ["summary", str(path), "--capture", str(folder), "--json"]
    assert main(ask) == 0
    first = json.loads(capsys.readouterr().out)["capture_attribution"]
    renamed = Trace()
    renamed.capture([dict(c, op=c["op"] + "_v2") for c in DECODER])
    renamed.write(folder / "a.json.gz")  # the same file name, new content
    assert main(ask) == 0
    second = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert {o["operator"] for o in first["operators"]} == {"aten::mm", "aten::add"}
    assert {o["operator"] for o in second["operators"]} == {"aten::mm_v2", "aten::add_v2"}
