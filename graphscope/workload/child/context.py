"""The object a workload's `setup(ctx)` and `step(ctx)` receive (runs in the child process, with CuPy).

    def setup(ctx):
        k = ctx.kernel(SOURCE, "vec_add")
        a, b, c = ...
        ctx.outputs(c=c)
        def step(ctx):
            for i in range(1000):
                ctx.launch(k, problem=n, block=256, args=(a, b, c, n), name="add")
        return step

Launches through `ctx.launch` are recorded as sites (`add#0`, `add#1`, ...) and their block size can be
overridden; the grid follows from the problem size (or the site's `grid` rule) and the dynamic shared
memory from the site's `shared_mem` (a number, or a rule of the block). Plain CuPy code in the step
runs on `ctx.stream` and is measured like the rest, but is not tunable. GEMMs and other library calls
go through `ctx.matmul` / `ctx.torch_stream()` (workload/child/interop.py), which CUDA graphs can capture.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphscope.core.launch_config import Dim, LaunchConfig, Site, as_dim, grid_for
from graphscope.workload.child.interop import TorchInterop

SharedRule = int | Callable[[Dim], int]
DEFAULT_DYNAMIC_SHARED = 48 * 1024  # what a kernel may use without opting in


def _compact(dim: Dim) -> tuple[int, ...]:
    """(64, 1, 1) -> (64,): what CuPy gets, as a plain loop would pass it."""
    size = len(dim)
    while size > 1 and dim[size - 1] == 1:
        size -= 1
    return dim[:size]


class Kernel:
    """A CuPy RawKernel plus the limits that bound its block size and shared memory."""

    def __init__(self, raw: Any, name: str, max_shared_optin: int, source: str = "", options: tuple = ()) -> None:
        self.raw = raw
        self.name = name
        self.source, self.options = source, tuple(options)  # to read its code back (griddepcontrol, PDL)
        self.pdl_launch: Any = None  # the same kernel through cuLaunchKernelEx with PDL (made on first use)
        attributes = raw.attributes
        self.max_threads = int(attributes.get("max_threads_per_block", 1024))
        self.registers = int(attributes.get("num_regs", 0))
        self.static_shared = int(attributes.get("shared_size_bytes", 0))
        self.max_dynamic_shared = max(max_shared_optin - self.static_shared, 0)

    def allow_shared(self, nbytes: int) -> None:
        """Let the kernel take `nbytes` of dynamic shared memory (opting in above 48 KiB)."""
        if nbytes > self.max_dynamic_shared:
            raise ValueError(
                f"{self.name} needs {nbytes:,} bytes of dynamic shared memory; the device allows "
                f"{self.max_dynamic_shared:,} next to its {self.static_shared:,} static bytes"
            )
        if nbytes > DEFAULT_DYNAMIC_SHARED - self.static_shared and nbytes > self.raw.max_dynamic_shared_size_bytes:
            self.raw.max_dynamic_shared_size_bytes = nbytes


class WorkloadContext:
    """Streams, kernels, launches and declared outputs of one workload."""

    def __init__(self, config: LaunchConfig | None = None) -> None:
        import cupy

        self.cupy = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self._stream_cell = [self.stream]  # ctx.launch's default stream: a conditional body's while it is captured
        self._conditionals: Any = None  # conditional.py, made at the first ctx.while_loop / if_else / switch
        config = config or LaunchConfig()
        self.sites: list[Site] = []
        self.batch: int | None = None  # the batch size being built, for workloads that declare SIZES
        self.max_batch: int | None = None  # the largest of them: allocate buffers once at this size
        self.recording = False
        self.launch_counts = {"launch": 0, "launcher": 0}  # per path, in the last recorded step
        self._ordinals: dict[str, int] = {}  # launches per name so far in this step (slow path only)
        self._counted = 0
        self._outputs: dict[str, Any] = {}
        self.grid_rules: dict[str, Callable[[Dim, Dim], Sequence[int]]] = {}
        self.shared_rules: dict[str, Callable[[Dim], int]] = {}
        self.max_shared_optin = int(cupy.cuda.Device().attributes.get("MaxSharedMemoryPerBlockOptin", 49152))
        self.interop = TorchInterop(self)
        # per position in the step: kernel, name, problem, block, chosen block, grid, config, raw kernel,
        # block and grid as CuPy gets them, shared memory bytes, and the shared_mem argument
        self._plans: list[tuple] = []
        self._position = [0]
        self._config_cell = [config]
        self._recording_cell = [False]
        self._direct_cells: list[list[Any]] = []  # launchers' direct paths, reset when the config changes
        self.launch = self._launcher()
        self._modules: dict[tuple[str, tuple[str, ...]], Any] = {}
        self.kernels: dict[str, Kernel] = {}  # site key -> its kernel
        # while set (graphscope diverge records one eager step), the raw kernel each new plan calls is
        # tap(raw kernel, site key) instead: a wrapper that notes the launch's arguments; plans are
        # redone at every recorded step, so the plain path costs nothing more
        self.tap: Callable[[Any, str], Any] | None = None

    @property
    def config(self) -> LaunchConfig:
        return self._config_cell[0]

    @config.setter
    def config(self, config: LaunchConfig) -> None:
        self._config_cell[0] = config  # plans made under another config are redone at their next launch
        for cell in self._direct_cells:
            cell[0] = None

    # -- for workloads -------------------------------------------------------------------------

    def kernel(self, source: str, name: str, options: Sequence[str] = ()) -> Kernel:
        """Compile (once) and return a kernel from CUDA C++ source; give it `extern "C"` linkage."""
        key = (source, tuple(options))
        module = self._modules.get(key)
        if module is None:
            module = self._modules[key] = self.cupy.RawModule(code=source, options=tuple(options))
        return Kernel(module.get_function(name), name, self.max_shared_optin, source, tuple(options))

    def _launcher(self) -> Callable[..., Dim]:
        """Build `ctx.launch` as a closure over its state: no attribute lookups on the hot path.

        After the first step a launch's plan is found by its position in the step; what that costs over
        calling the CuPy kernel directly is measured per run and shown beside the speed-up (own_cost.py).
        """
        plans, position, config, default_stream, replan = (
            self._plans,
            self._position,
            self._config_cell,
            self._stream_cell,
            self._plan,
        )

        def launch(
            kernel: Kernel,
            problem: int | Sequence[int],
            args: Sequence[Any] = (),
            block: int | Sequence[int] = 256,
            name: str | None = None,
            shared_mem: SharedRule = 0,
            grid: Callable[[Dim, Dim], Sequence[int]] | None = None,
            stream: Any = None,
            pdl: bool = False,
        ) -> Dim:
            """Launch `kernel` over `problem` threads; returns the block size actually used.

            `name` identifies the launch site (default: the kernel's name); `grid`, if given, maps
            (problem, block) to the grid instead of ceil(problem / block); `shared_mem` is the dynamic
            shared memory in bytes, or a function of the block (a tile that grows with the block);
            `pdl`: programmatic dependent launch (workload/child/pdl.py), the kernel may start before the one
            before it on the stream ends (it should `griddepcontrol.wait` before reading its output).
            """
            at = position[0]
            position[0] = at + 1
            plan = plans[at] if at < len(plans) else None
            if (
                plan is None
                or plan[0] is not kernel
                or plan[1] != name
                or plan[2] != problem
                or plan[3] != block
                or plan[6] is not config[0]
                or plan[11] != shared_mem
                or plan[12] != pdl
            ):
                plan = replan(at, kernel, problem, block, name, shared_mem, grid, pdl=pdl)
            if plan[10]:
                plan[7](plan[9], plan[8], args, shared_mem=plan[10], stream=stream or default_stream[0])
            else:  # no shared_mem keyword: CuPy takes 170 ns more per call with it (H100, own_overhead_gpu.py)
                plan[7](plan[9], plan[8], args, stream=stream or default_stream[0])
            return plan[4]

        return launch

    def launcher(
        self,
        kernel: Kernel,
        problem: int | Sequence[int],
        block: int | Sequence[int] = 256,
        name: str | None = None,
        shared_mem: SharedRule = 0,
        grid: Callable[[Dim, Dim], Sequence[int]] | None = None,
        stream: Any = None,
        pdl: bool = False,
    ) -> Callable[..., None]:
        """Bind a launch site once, in setup; calling the result with the kernel's arguments launches it.

        For hot loops: `add = ctx.launcher(k, problem=n, name="add")` then `add(a, b, c, n)` in the
        step. Sites, overrides and grids work as with `ctx.launch`; while no per-site override
        (`add#3`) applies and nothing is being recorded, a call goes straight to the CuPy kernel.
        """
        position, config, recording, replan = (
            self._position,
            self._config_cell,
            self._recording_cell,
            self._plan,
        )
        target = stream or self.stream
        current = self._stream_cell  # the slow path (every recorded step) follows a conditional body's stream
        site_name = name or kernel.name
        # (raw kernel, grid, block, shared memory) as CuPy takes them, while every call gets the same;
        # emptied while a step records and when the config changes. One cell read and no other test on
        # the fast path: against a kernel call that does nothing it costs 80 ns on CI's CPU, where
        # checking the recording flag as well cost 126 ns (own_cost.py measures it on every run).
        direct: list[Any] = [None]
        self._direct_cells.append(direct)

        def launch(*args: Any) -> None:
            fast = direct[0]
            if fast is not None:
                if fast[3]:
                    fast[0](fast[1], fast[2], args, shared_mem=fast[3], stream=target)
                else:  # CuPy's kernel call costs 170 ns more with a shared_mem keyword, even 0: 2.3% of the
                    fast[0](fast[1], fast[2], args, stream=target)  # seeds' eager step (H100, own_overhead_gpu.py)
                return
            at = position[0]
            position[0] = at + 1
            plan = replan(at, kernel, problem, block, name, shared_mem, grid, bound=True, pdl=pdl)
            overrides = (*config[0].blocks, *config[0].pdl)
            if not recording[0] and not any(key.startswith(site_name + "#") for key in overrides):
                direct[0] = (plan[7], plan[9], plan[8], plan[10])
            plan[7](plan[9], plan[8], args, shared_mem=plan[10], stream=stream or current[0])

        return launch

    def _plan(
        self,
        position: int,
        kernel: Kernel,
        problem: int | Sequence[int],
        block: int | Sequence[int],
        name: str | None,
        shared_mem: SharedRule,
        grid: Callable[[Dim, Dim], Sequence[int]] | None,
        bound: bool = False,
        pdl: bool = False,
    ) -> tuple:
        """Work out (and remember) a launch's block, grid and shared memory under the current config;
        record its site (and whether it came through `ctx.launch` or a bound `ctx.launcher`)."""
        site_name = name or kernel.name
        if self._counted != position:  # fast-path launches since the last count: recount (rare)
            self._ordinals.clear()
            for earlier in self._plans[:position]:
                earlier_name = earlier[1] or earlier[0].name
                self._ordinals[earlier_name] = self._ordinals.get(earlier_name, 0) + 1
        ordinal = self._ordinals.get(site_name, 0)
        self._ordinals[site_name] = ordinal + 1
        self._counted = position + 1
        size = as_dim(problem)
        chosen = self._config_cell[0].block_for(site_name, ordinal, as_dim(block))
        blocks = as_dim(grid(size, chosen)) if grid is not None else grid_for(size, chosen)
        shared = int(shared_mem(chosen)) if callable(shared_mem) else int(shared_mem)
        kernel.allow_shared(shared)
        programmatic = self._config_cell[0].pdl_for(site_name, ordinal, pdl)
        if programmatic and kernel.pdl_launch is None:
            from graphscope.workload.child.pdl import PdlLaunch

            kernel.pdl_launch = PdlLaunch(kernel.raw, self.stream)
        if self.recording:
            self.launch_counts["launcher" if bound else "launch"] += 1
            site = Site(
                site_name,
                ordinal,
                kernel.name,
                size,
                chosen,
                blocks,
                shared,
                kernel.max_threads,
                kernel.registers,
                shared_rule=callable(shared_mem),
                max_shared=kernel.max_dynamic_shared,
                pdl=programmatic,
            )
            self.sites.append(site)
            self.kernels[site.key] = kernel
            if grid is not None:
                self.grid_rules[site.key] = grid
            if callable(shared_mem):
                self.shared_rules[site.key] = shared_mem
        plan = (
            kernel,
            name,
            problem,
            block,
            chosen,
            blocks,
            self._config_cell[0],
            (kernel.pdl_launch if programmatic else kernel.raw)
            if self.tap is None
            else self.tap(kernel.pdl_launch if programmatic else kernel.raw, f"{site_name}#{ordinal}"),
            _compact(chosen),
            _compact(blocks),
            shared,
            shared_mem,
            pdl,
        )
        if position < len(self._plans):
            self._plans[position] = plan
        else:
            self._plans.append(plan)
        return plan

    def outputs(self, **arrays: Any) -> None:
        """Declare the arrays whose values must match between eager, graph and tuned runs."""
        self._outputs.update(arrays)

    def pinned(self, shape: int | tuple[int, ...], dtype: Any = "float32") -> Any:
        """A NumPy array in page-locked host memory: the host side of `ctx.copy` (a request in, an answer out)."""
        from graphscope.workload.child.copies import pinned

        return pinned(self.cupy, shape, dtype)

    def copy(self, dst: Any, src: Any, stream: Any = None) -> None:
        """dst <- src on `stream` (default ctx.stream) with cudaMemcpyAsync: host (from ctx.pinned) to device,
        device to host, or device to device; captured as a memcpy node in graph mode, where CuPy's own
        `.set` / `.get` are refused."""
        from graphscope.workload.child.copies import copy

        copy(dst, src, stream or self.stream)

    def while_loop(
        self, body: Callable[[Any], Any], flag: Any, max_iterations: int | None = None, name: str = "while"
    ) -> None:
        """`while flag[0] != 0: body(ctx)` (at most `max_iterations` times): a WHILE conditional node when
        captured, a host loop eagerly. `flag`: a one-element CuPy int32 array the body's kernels set
        (workload/child/conditional.py)."""
        self._conditional().run("while", [body], flag, max_iterations, name)

    def if_else(
        self, then: Callable[[Any], Any], flag: Any, otherwise: Callable[[Any], Any] | None = None, name: str = "if"
    ) -> None:
        """`then(ctx)` if flag[0] != 0, else `otherwise(ctx)`: an IF (/ELSE) conditional node when captured."""
        self._conditional().run("if", [then] if otherwise is None else [then, otherwise], flag, None, name)

    def switch(self, cases: Sequence[Callable[[Any], Any]], flag: Any, name: str = "switch") -> None:
        """`cases[flag[0]](ctx)` (none when out of range): a SWITCH conditional node when captured."""
        self._conditional().run("switch", list(cases), flag, None, name)

    def _conditional(self) -> Any:
        if self._conditionals is None:
            from graphscope.workload.child.conditional import Conditionals

            self._conditionals = Conditionals(self)
        return self._conditionals

    def use_stream(self, stream: Any) -> Any:
        """Make `stream` the step's stream (ctx.stream, ctx.launch's default); returns the one it replaces."""
        previous, self.stream = self.stream, stream
        self._stream_cell[0] = stream
        return previous

    def new_stream(self) -> Any:
        """An extra non-blocking stream for fork/join steps (join it back into `ctx.stream`)."""
        return self.cupy.cuda.Stream(non_blocking=True)

    # -- for graphscope --------------------------------------------------------------------------

    def begin_step(self, record: bool = False) -> None:
        self._ordinals.clear()
        self._counted = 0
        self._position[0] = 0
        self.recording = record
        self._recording_cell[0] = record
        if self._conditionals is not None:
            self._conditionals.begin_step(record)
        if record:
            self.sites = []
            self.launch_counts = {"launch": 0, "launcher": 0}
            for cell in self._direct_cells:  # every launch of a recorded step takes the recording path
                cell[0] = None
            self._plans.clear()

    def end_step(self) -> None:
        self.recording = False
        self._recording_cell[0] = False

    def grid_of(self, site: Site, block: Dim) -> Dim:
        """The grid a site gets with `block`: its own rule if it gave one, else ceil(problem / block)."""
        rule = self.grid_rules.get(site.key)
        return as_dim(rule(site.problem, block)) if rule is not None else grid_for(site.problem, block)

    def shared_of(self, site: Site, block: Dim) -> int:
        """The dynamic shared memory a site needs with `block` (its rule's answer, else what it asked)."""
        rule = self.shared_rules.get(site.key)
        return int(rule(block)) if rule is not None else site.shared_mem

    # -- library calls that capture (GEMMs through PyTorch) ---------------------------------------

    def matmul(self, a: Any, b: Any, out: Any, stream: Any = None) -> Any:
        """out = a @ b on `stream` (default ctx.stream), through PyTorch's cuBLAS, which graph capture
        records (CuPy refuses cuBLAS calls while a stream captures). a, b, out: CuPy arrays."""
        return self.interop.matmul(a, b, out, stream)

    @property
    def torch(self) -> Any:
        """The torch module (a clear error names what to install when it is missing)."""
        return self.interop.torch

    def torch_stream(self, stream: Any = None) -> Any:
        """A context manager: PyTorch calls inside it run on `stream` (default ctx.stream), so they are
        captured into the graph with the rest of the step."""
        return self.interop.on_stream(stream)

    def as_torch(self, array: Any) -> Any:
        """A CuPy array as a torch tensor on the same memory (no copy)."""
        return self.interop.tensor(array)

    def snapshot_outputs(self) -> dict[str, Any]:
        """Host copies of the declared outputs (CuPy arrays or torch tensors; taken after a synchronise)."""
        return {name: host_copy(self.cupy, array) for name, array in self._outputs.items()}

    def output_dtypes(self) -> dict[str, str]:
        """Each declared output's own dtype ('bfloat16' stays bfloat16 although its copy is float32)."""
        return {name: dtype_name(array) for name, array in self._outputs.items()}


def dtype_name(array: Any) -> str:
    """'float32', 'bfloat16', ... for a CuPy array or a torch tensor."""
    return str(array.dtype).removeprefix("torch.")


def host_copy(cupy: Any, array: Any) -> Any:
    """A NumPy copy of a CuPy array, a torch tensor, a host array (an answer copied out into ctx.pinned
    memory: copied, or the reference would be the buffer the next step overwrites) or anything with the
    CUDA array interface."""
    if isinstance(array, np.ndarray):
        return array.copy()
    if hasattr(array, "detach"):  # torch: bfloat16 and friends have no NumPy type; compare them as float32
        tensor = array.detach()
        if str(tensor.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
            tensor = tensor.float()
        return tensor.cpu().numpy()
    return cupy.asnumpy(array)
