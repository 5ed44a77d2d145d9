"""One decoder step built three ways on the same weights, traced and timed (issue #45's fusion check).

A Llama-style block stack (RMSNorm, QKV projection, attention over a static KV cache, output projection,
SwiGLU MLP; random bf16 weights) decodes one token per sequence per step, the same position every step
(so every step does the same work), and each step ends with the host reading the sampled tokens (a sync,
as a serving step's sampling does). Built three ways:

- full: the whole step captured into one CUDA graph;
- piecewise: as vLLM's piecewise mode, one graph per piece between attentions (layer i's output
  projection and MLP with layer i+1's norm and QKV projection), attention run eagerly between them;
- eager: no graph.

    python benchmarks/fusion_check.py measure -o OUTDIR [--layers 12] [--steps 200]
        each way: untraced step times (perf_counter around each step), then a torch.profiler trace of
        ACTIVE steps (OUTDIR/decoder_{full,piecewise,eager}.json.gz) and the outputs compared
    python benchmarks/fusion_check.py check OUTDIR
        graphscope's fusion prediction from the piecewise trace against the full trace's measured steps
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WAYS = ("full", "piecewise", "eager")


def _model(layers: int, hidden: int, heads: int, ffn: int, vocab: int, batch: int, cache: int, pos: int):
    import torch
    from torch import nn
    from torch.nn import functional as F

    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    hd = hidden // heads

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.RMSNorm(hidden), nn.RMSNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
            self.o = nn.Linear(hidden, hidden, bias=False)
            self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
            self.down = nn.Linear(ffn, hidden, bias=False)
            self.register_buffer("k", torch.zeros(batch, heads, cache, hd))
            self.register_buffer("v", torch.zeros(batch, heads, cache, hd))

        def pre(self, x):
            q, k, v = self.qkv(self.norm1(x)).view(batch, 1, 3, heads, hd).unbind(2)
            return q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()

        def attend(self, q, k, v, at, mask, into=None):
            self.k.index_copy_(2, at, k)
            self.v.index_copy_(2, at, v)
            a = F.scaled_dot_product_attention(q, self.k, self.v, attn_mask=mask).transpose(1, 2)
            if into is None:
                return a.reshape(batch, 1, hidden)  # one copy kernel, as into.view(...).copy_ below
            into.view(batch, 1, heads, hd).copy_(a)
            return into

        def post(self, x, a):
            x = x + self.o(a)
            g, u = self.gate_up(self.norm2(x)).chunk(2, -1)
            return x + self.down(F.silu(g) * u)

    blocks = nn.ModuleList(Block() for _ in range(layers)).to(dev, dt)
    embed = nn.Embedding(vocab, hidden).to(dev, dt)
    head = nn.Linear(hidden, vocab, bias=False).to(dev, dt)
    norm = nn.RMSNorm(hidden).to(dev, dt)
    for b in blocks:  # a history in the cache so attention reads real values
        b.k.normal_()
        b.v.normal_()
    tokens = torch.randint(0, vocab, (batch, 1), device=dev)
    at = torch.tensor([pos], device=dev)
    mask = (torch.arange(cache, device=dev) <= pos).view(1, 1, 1, cache)
    return torch, blocks, embed, head, norm, tokens, at, mask


class Decoder:
    """The step three ways (module docstring); `step()` runs one and returns the sampled tokens (host)."""

    def __init__(self, way: str, **shape: int) -> None:
        torch, blocks, embed, head, norm, tokens, at, mask = _model(**shape)
        self.torch, self.way, self.batch = torch, way, shape["batch"]
        self.blocks, self.tokens, self.at, self.mask = blocks, tokens, at, mask
        self.embed, self.head, self.norm = embed, head, norm
        self.out = torch.zeros(tokens.shape, dtype=torch.int64, device="cuda")
        with torch.inference_mode():
            if way == "full":
                self.graph = self._capture(self._whole)
            elif way == "piecewise":
                n = len(blocks)
                # the pieces' static tensors: piece i writes x[i] and qkv[i] (inside its graph's pool),
                # attention i writes a[i] (allocated here), piece i + 1 reads x[i] and a[i]
                self._x: list = [None] * n
                self._qkv: list = [None] * n
                self._a = [torch.zeros(self.batch, 1, shape["hidden"], device="cuda", dtype=torch.bfloat16)
                           for _ in range(n)]  # fmt: skip
                self.pieces = [self._capture(lambda i=i: self._piece(i)) for i in range(n + 1)]

    def _capture(self, body):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                body()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            body()
        torch.cuda.synchronize()
        return graph

    def _whole(self) -> None:
        x = self.embed(self.tokens)
        for b in self.blocks:
            x = b.post(x, b.attend(*b.pre(x), self.at, self.mask))
        self.out.copy_(self.head(self.norm(x)).argmax(-1))

    def _piece(self, i: int) -> None:
        """Piece i: the embedding (i = 0) or layer i-1's post, then layer i's pre (or the head)."""
        x = self.embed(self.tokens) if i == 0 else self.blocks[i - 1].post(self._x[i - 1], self._a[i - 1])
        if i < len(self.blocks):
            self._x[i] = x
            self._qkv[i] = self.blocks[i].pre(x)
        else:
            self.out.copy_(self.head(self.norm(x)).argmax(-1))

    def _attention(self, i: int) -> None:
        a = self.blocks[i].attend(*self._qkv[i], self.at, self.mask, into=self._a[i])
        assert a is self._a[i]

    def step(self):
        with self.torch.inference_mode():
            if self.way == "full":
                self.graph.replay()
            elif self.way == "piecewise":
                for i, piece in enumerate(self.pieces):
                    piece.replay()
                    if i < len(self.blocks):
                        self._attention(i)
            else:
                self._whole()
            return self.out.tolist()  # the host reads the sampled tokens: the step's sync


def _times(decoder: Decoder, steps: int) -> list[float]:
    for _ in range(10):
        decoder.step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        decoder.step()
        times.append(float(time.perf_counter_ns() - t0))
    return times


def _trace(decoder: Decoder, path: Path, active: int) -> None:
    torch = decoder.torch
    from torch.profiler import ProfilerActivity, profile, schedule

    raw = path.with_suffix("")  # x.json
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=2, active=active, repeat=1),
        on_trace_ready=lambda p: p.export_chrome_trace(str(raw)),
    ) as prof:
        for _ in range(3 + active + 1):
            decoder.step()
            prof.step()
    with open(raw, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    torch.cuda.synchronize()


def _measure(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    shape = {"layers": args.layers, "hidden": args.hidden, "heads": 16, "ffn": args.hidden * 11 // 4,
             "vocab": 32000, "batch": args.batch, "cache": 512, "pos": 300}  # fmt: skip
    result: dict = {"shape": shape, "ways": {}}
    tokens = {}
    for way in WAYS:
        t0 = time.perf_counter()
        try:
            decoder = Decoder(way, **shape)
            tokens[way] = decoder.step()
            times = _times(decoder, args.steps)
            result["ways"][way] = {"median_ns": statistics.median(times), "times_ns": [round(t) for t in times]}
            print(f"{way:<10} untraced step median {statistics.median(times) / 1000:9.1f} us ({len(times)} steps)")
            _trace(decoder, out / f"decoder_{way}.json.gz", args.active)
            result["ways"][way]["seconds"] = round(time.perf_counter() - t0, 2)
            del decoder
        except Exception as e:  # one way failing leaves the others measured
            result.setdefault("failed", {})[way] = repr(e)
            print(f"{way}: failed: {e!r}")
            traceback.print_exc()
        (out / "fusion_times.json").write_text(json.dumps(result))
    result["same_tokens"] = len(tokens) == 3 and tokens["full"] == tokens["piecewise"] == tokens["eager"]
    result["gpu"] = __import__("torch").cuda.get_device_name()
    print("same sampled tokens three ways:", result["same_tokens"], {w: t[0] for w, t in tokens.items()})
    (out / "fusion_times.json").write_text(json.dumps(result))
    return 0


def _ratio_interval(a: list[float], b: list[float], draws: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of median(a) / median(b), each side resampled on its own."""
    import numpy as np

    rng = np.random.default_rng(0)
    x, y = np.asarray(a, float), np.asarray(b, float)
    ratios = np.median(rng.choice(x, (draws, len(x))), 1) / np.median(rng.choice(y, (draws, len(y))), 1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def compare(folder: Path) -> dict:
    """graphscope's anatomy of the three traces, and the fusion prediction from the piecewise one against the
    full trace's measured steps (and, where fusion_times.json is there, the untraced steps)."""
    import numpy as np

    from graphscope.analysis.anatomy import anatomy
    from graphscope.analysis.fusion import fused, fusion_json
    from graphscope.analysis.summary import analyze
    from graphscope.core.launch_cost import DEFAULT
    from graphscope.trace.reader import load_trace

    found = {}
    for way in WAYS:
        trace = load_trace(folder / f"decoder_{way}.json.gz")
        analysis = analyze(trace)
        found[way] = anatomy(trace, analysis.work, analysis.graphs, analysis.launches)
    steps = {way: (a.steps.end - a.steps.start).astype(float).tolist() for way, a in found.items()}
    piecewise = found["piecewise"]
    pw = np.flatnonzero(np.array(piecewise.modes) == "piecewise")
    predicted = fused(piecewise)["predicted_ns"][pw].astype(float).tolist()
    model = DEFAULT.per_node_ns + DEFAULT.per_edge_ns
    predicted_untraced = fused(piecewise, per_node=model)["predicted_ns"][pw].astype(float).tolist()
    full = steps["full"]
    median = statistics.median
    lo, hi = _ratio_interval(predicted, full)
    report = {
        "modes": {way: a.modes for way, a in found.items()},
        "median_step_ns": {way: median(v) for way, v in steps.items()},
        "predicted_full_ns": median(predicted),
        "prediction_error": median(predicted) / median(full) - 1,
        "prediction_error_95": [lo - 1, hi - 1],
        "fusion": fusion_json(piecewise),
        "piecewise_steps": {c: piecewise.steps[c].tolist() for c in ("graph_launches", "islands", "island_kernels",
                                                                     "seams", "seam_ns", "seam_host_wait_ns")},
    }  # fmt: skip
    times = folder / "fusion_times.json"
    if times.exists():
        untraced = {w: v["times_ns"] for w, v in json.loads(times.read_text())["ways"].items()}
        speedup = median(steps["piecewise"]) / median(predicted)
        measured = median(untraced["piecewise"]) / median(untraced["full"])
        lo_u, hi_u = _ratio_interval(predicted_untraced, untraced["full"])
        report["untraced"] = {
            "median_step_ns": {w: median(v) for w, v in untraced.items()},
            "predicted_full_untraced_launches_ns": median(predicted_untraced),
            "prediction_error": median(predicted_untraced) / median(untraced["full"]) - 1,
            "prediction_error_95": [lo_u - 1, hi_u - 1],
            "speedup_full_over_piecewise": measured,
            "speedup_predicted_from_trace": speedup,
        }
    return report


def _check(args: argparse.Namespace) -> int:
    report = compare(Path(args.dir))
    print(json.dumps(report, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("measure")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--active", type=int, default=8)
    p.set_defaults(run=_measure)
    p = sub.add_parser("check")
    p.add_argument("dir")
    p.set_defaults(run=_check)
    args = parser.parse_args()
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
