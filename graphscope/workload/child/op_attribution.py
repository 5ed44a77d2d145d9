"""The module, PyTorch operator, input shapes and user line behind each kernel a torch step launches: one
eager step profiled with `torch.profiler` (stacks and shapes recorded), every nn.Module call marked as a
`record_function` range named by its path in the model ('model.layers.0.self_attn.q_proj'), in the
workload child. The user's line is the first frame of the operator's stack outside torch, the libraries
and graphscope (core/frames.py).

PyTorch's profiler hands each kernel to the innermost operator running when it was launched (its
correlation id); walking up from there gives the outermost `aten::` operator inside the innermost module
range ('aten::linear' rather than the 'aten::addmm' it calls) and that module. A kernel launched outside
any operator (a Triton kernel, which its own launcher starts) is given to the module range around it.
graph/launched_by.py aligns the result with the graph's kernel nodes.
"""

from __future__ import annotations

from typing import Any

from graphscope.core.frames import is_user_frame, user_frame

MODULE_MARK = "module: "
"""Prefix of the ranges this module opens, so they are told apart from the workload's own."""


class ModuleRanges:
    """Global forward hooks that open a range per module call, named by the module's path from its root
    (the outermost module called: its `named_modules()` names everything below it)."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.names: dict[int, str] = {}
        self.open: list[Any] = []
        hooks = torch.nn.modules.module
        self.handles = [
            hooks.register_module_forward_pre_hook(self.enter),
            hooks.register_module_forward_hook(self.leave),
        ]

    def enter(self, module: Any, args: Any) -> None:
        if not self.open and id(module) not in self.names:  # a root: name everything under it
            root = type(module).__name__
            for path, child in module.named_modules():
                self.names.setdefault(id(child), path or root)
        scope = self.torch.profiler.record_function(MODULE_MARK + self.names.get(id(module), type(module).__name__))
        scope.__enter__()
        self.open.append(scope)

    def leave(self, module: Any, args: Any, output: Any) -> None:
        if self.open:
            self.open.pop().__exit__(None, None, None)

    def close(self) -> None:
        while self.open:  # a forward that raised skips its hook: close what it left open
            self.open.pop().__exit__(None, None, None)
        for handle in self.handles:
            handle.remove()


def _launcher(event: Any) -> tuple[str | None, str | None, Any]:
    """(module path, outermost aten operator under it, that operator's event) of the operator event a
    kernel belongs to."""
    op, op_event, current = None, None, event
    while current is not None:
        name = str(current.name)
        if name.startswith(MODULE_MARK):
            return name[len(MODULE_MARK) :], op, op_event
        if name.startswith("aten::"):
            op, op_event = name, current
        current = getattr(current, "cpu_parent", None)
    return None, op or (None if str(event.name).startswith(MODULE_MARK) else str(event.name)), op_event


def _frame(event: Any, enclosing: Any = None) -> str | None:
    """The user's line of code that launched the event's kernels: the first frame outside torch, the
    libraries and graphscope in the nearest recorded stack (innermost first) of it or an operator around it;
    where no operator carries a stack, the Python-function events around it (their names are frames), from
    its parents or, by time on its thread, from `enclosing` (PythonFrames)."""
    current, names = event, []
    while current is not None:
        stack = getattr(current, "stack", None)
        if stack:
            return user_frame(str(frame) for frame in stack)
        names.append(str(current.name))
        current = getattr(current, "cpu_parent", None)
    found = user_frame(names)  # Python-function events among the parents, innermost first
    if found is None and enclosing is not None:
        found = user_frame(enclosing.around(event))
    return found


class PythonFrames:
    """The profiler's Python-function events (`with_stack=True`; `events()` returns them in newer PyTorch)
    as columns, to find the frames around an operator by time on its thread when no stack is attached."""

    def __init__(self, events: list[Any]) -> None:
        import numpy as np

        python = [e for e in events if getattr(e, "is_python_function", False) or is_user_frame(str(e.name))]
        self.names = [str(e.name) for e in python]
        self.start = np.array([e.time_range.start for e in python], dtype=np.float64)
        self.end = np.array([e.time_range.end for e in python], dtype=np.float64)
        self.thread = np.array([getattr(e, "thread", 0) for e in python], dtype=np.int64)

    def around(self, event: Any) -> list[str]:
        """Names of the Python frames running while `event` ran on its thread, innermost (latest) first."""
        import numpy as np

        if not self.names:
            return []
        span = event.time_range
        inside = (self.start <= span.start) & (self.end >= span.end) & (self.thread == getattr(event, "thread", 0))
        found = np.flatnonzero(inside)
        return [self.names[i] for i in found[np.argsort(-self.start[found], kind="stable")]]


def _shapes(event: Any) -> str | None:
    """The operator's input shapes ('[8, 256], [256, 256]'), where recorded and any input has one."""
    shapes = getattr(event, "input_shapes", None) if event is not None else None
    if not shapes or not any(shapes):
        return None
    return ", ".join(str(list(shape)) for shape in shapes if shape)


def profiled_launches(live: Any) -> list[dict[str, Any]]:
    """Kernel launches of one eager step (from a reset state), in launch order, each as {'kernel': name,
    'module': path, 'op': operator, 'frame': the user's line, 'shapes': the operator's input shapes},
    None where unknown. Stacks and shapes are recorded for this one step only (they cost host time)."""
    import torch
    import torch.profiler

    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    live.reset_state()
    ranges = ModuleRanges(torch)
    try:
        with torch.profiler.profile(
            activities=activities, record_shapes=True, with_stack=True, experimental_config=_verbose(torch)
        ) as profiler:
            live.fw.run(live.step)
            live.fw.synchronize()
    finally:
        ranges.close()
    launches: list[dict[str, str | None]] = []
    every = list(profiler.events())
    events = [e for e in every if getattr(e, "kernels", None)]
    enclosing = PythonFrames(every)
    for event in sorted(events, key=lambda e: e.time_range.start):
        module, op, op_event = _launcher(event)
        found = {"module": module, "op": op, "frame": _frame(event, enclosing), "shapes": _shapes(op_event)}
        launches.extend({"kernel": str(k.name), **found} for k in event.kernels)
    return launches


def _verbose(torch: Any) -> Any:
    """The profiler's verbose experimental config, which attaches Python stacks to operator events (with
    `with_stack=True` alone PyTorch 2.11 on an H100 attached none: 0 of 221 decode-step kernels got a line;
    pytorch/pytorch#100253); None where this PyTorch has no such config."""
    try:
        return torch._C._profiler._ExperimentalConfig(verbose=True)
    except (AttributeError, TypeError):
        return None
