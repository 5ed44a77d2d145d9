"""What `run --profile torch` asks torch.profiler for, without a GPU: the graph mode's capture recorded
with stacks, shapes and module paths (a `module: PATH` range per nn.Module call), the eager mode without
them (they cost host time per operator); hooks removed and the adapter's ranges restored afterwards."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from graphscope.workload.child import torch_profile
from graphscope.workload.child.op_attribution import MODULE_MARK


class FakeTorch:
    """torch.profiler.profile / record_function and the global module hooks, recorded."""

    def __init__(self) -> None:
        self.profiles: list[dict] = []
        self.ranges: list[str] = []
        self.hooks: dict[str, object] = {}
        self.removed = 0
        fake = self

        class Profile:
            def __init__(self, **options):
                fake.profiles.append(options)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def export_chrome_trace(self, path):
                Path(path).write_text("{}")

        class Range:
            def __init__(self, text):
                fake.ranges.append(text)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        def register(kind):
            def add(hook):
                fake.hooks[kind] = hook
                return SimpleNamespace(remove=fake.remove)

            return add

        activity = SimpleNamespace(CPU="cpu", CUDA="cuda")
        self.profiler = SimpleNamespace(profile=Profile, record_function=Range, ProfilerActivity=activity)
        hooks = SimpleNamespace(
            register_module_forward_pre_hook=register("pre"), register_module_forward_hook=register("post")
        )
        self.nn = SimpleNamespace(modules=SimpleNamespace(module=hooks))

    def remove(self) -> None:
        self.removed += 1


class Module:
    def __init__(self, children=()):
        self.children = dict(children)

    def named_modules(self):
        yield "", self
        yield from self.children.items()


class FakeLive:
    """A live workload whose graph-mode measure calls a model (as a capture does) inside its push/pop."""

    def __init__(self, fake: FakeTorch) -> None:
        self.fake = fake
        self.fw = SimpleNamespace(name="torch", push=lambda text: None, pop=lambda: None)
        self.original = (self.fw.push, self.fw.pop)

    def measure(self, mode, reps, warmup, nvtx, fresh):
        assert nvtx and fresh == (mode == "graph")
        self.fw.push("graphscope capture")
        if mode == "graph":
            proj = Module()
            model = Module({"layers.0.proj": proj})
            for module in (model, proj):
                self.fake.hooks["pre"](module, ())
            for module in (proj, model):
                self.fake.hooks["post"](module, (), None)
        self.fw.pop()
        return {"mode": mode, "capture": {"capture_ns": 1}} if mode == "graph" else {"mode": mode}


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_the_graph_mode_s_capture_is_recorded_with_stacks_shapes_and_module_paths(mode, tmp_path, monkeypatch):
    fake = FakeTorch()
    monkeypatch.setattr(torch_profile, "_profiler", lambda: fake)
    live = FakeLive(fake)
    answer = torch_profile.profile_measure(live, mode, 5, 2, tmp_path / "t.json")
    graph = mode == "graph"
    (options,) = fake.profiles
    assert options["record_shapes"] is graph and options["with_stack"] is graph and options["with_modules"] is graph
    modules = [r for r in fake.ranges if r.startswith(MODULE_MARK)]
    assert modules == ([f"{MODULE_MARK}Module", f"{MODULE_MARK}layers.0.proj"] if graph else [])
    assert fake.removed == (2 if graph else 0)  # both global hooks taken off again
    assert (live.fw.push, live.fw.pop) == live.original and answer["trace"] == str(tmp_path / "t.json")
