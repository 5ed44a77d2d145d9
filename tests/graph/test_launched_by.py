"""Kernel nodes get the module and operator that launched them, aligned by name with a profiled step."""

from types import SimpleNamespace

from graphscope.graph.launched_by import attach_launchers, launcher_text
from graphscope.graph.model import Dag, DagNode
from graphscope.text.tune import render_dag
from graphscope.workload.child.live import triton_kernel_names
from graphscope.workload.child.op_attribution import MODULE_MARK, _frame, _launcher, _shapes

GEMM = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)"
FILL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
    "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"
)


def _nodes(*names):
    return [DagNode(i, "memcpy" if n == "memcpy" else "kernel", n) for i, n in enumerate(names)]


def test_nodes_and_launches_align_by_short_name_even_when_one_side_has_an_extra_kernel():
    nodes = _nodes("memcpy", "Kernel2", "vectorized_elementwise_kernel", "add_kernel")
    launches = [
        {"kernel": GEMM, "module": "layers.0.mlp.up", "op": "aten::linear"},
        {"kernel": "void only_eager_has_me(int)", "module": "layers.0.mlp", "op": "aten::copy_"},
        {"kernel": FILL, "module": "layers.0.mlp", "op": "aten::zeros"},
        {"kernel": "add_kernel", "module": "layers.0.mlp", "op": None},  # a Triton launch: no aten op around it
    ]
    assert attach_launchers(nodes, launches) == 3
    assert nodes[0].detail == {}  # a copy is not a kernel
    assert nodes[1].detail["launched_by"] == "layers.0.mlp.up / aten::linear"
    fill = {"module": "layers.0.mlp", "op": "aten::zeros", "launched_by": "layers.0.mlp / aten::zeros"}
    assert nodes[2].detail == fill
    assert nodes[3].detail == {"module": "layers.0.mlp", "launched_by": "layers.0.mlp"}


def test_kernels_the_profiler_never_saw_stay_unattributed():
    nodes = _nodes("a", "b")
    assert attach_launchers(nodes, [{"kernel": "c", "module": "m", "op": "aten::mul"}]) == 0
    assert all("launched_by" not in n.detail for n in nodes)
    assert launcher_text(None, None) is None and launcher_text(None, "aten::mul") == "aten::mul"


def _event(name, parent=None):
    return SimpleNamespace(name=name, cpu_parent=parent)


def test_a_kernel_belongs_to_the_outermost_aten_op_inside_the_innermost_module():
    root = _event(MODULE_MARK + "LlamaForCausalLM")
    layer = _event(MODULE_MARK + "model.layers.0.self_attn.q_proj", root)
    linear = _event("aten::linear", layer)
    addmm = _event("aten::addmm", _event("aten::matmul", linear))
    assert _launcher(addmm) == ("model.layers.0.self_attn.q_proj", "aten::linear", linear)
    assert _launcher(layer) == ("model.layers.0.self_attn.q_proj", None, None)  # a Triton kernel in a module
    mul = _event("aten::mul")
    assert _launcher(mul) == (None, "aten::mul", mul)  # a step that is not a module


def test_the_user_line_is_the_first_frame_outside_the_libraries_of_the_nearest_stack():
    model = "/home/u/site-packages/transformers/models/llama/modeling_llama.py(310): forward"
    linear = SimpleNamespace(
        name="aten::linear",
        cpu_parent=None,
        stack=["/usr/lib/python3.12/site-packages/torch/nn/modules/linear.py(125): forward", model],
        input_shapes=[[8, 1, 256], [256, 256], []],
    )
    addmm = SimpleNamespace(name="aten::addmm", cpu_parent=linear, stack=[], input_shapes=[[8, 256]])
    assert _frame(addmm) == model  # its own stack is empty: the operator's around it
    assert _shapes(linear) == "[8, 1, 256], [256, 256]" and _shapes(None) is None
    only_torch = SimpleNamespace(name="aten::mul", cpu_parent=None, stack=["torch/functional.py(1): f"])
    assert _frame(only_torch) is None and _frame(_event("aten::mul")) is None


def test_without_stacks_the_line_comes_from_the_python_function_events_around_the_operator():
    """PyTorch 2.11 on an H100 attached no stack to the decode step's operators (0 of 221 kernels got a
    line): the Python-function events the profiler records are then read, as parents or by time."""
    from graphscope.workload.child.op_attribution import PythonFrames

    def span(start, end):
        return SimpleNamespace(start=start, end=end)

    user = "/w/examples/hf_decode.py(41): step"
    model = "/venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py(310): forward"
    torch_frame = "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py(125): forward"
    frames = [
        SimpleNamespace(name=user, is_python_function=True, time_range=span(0, 100), thread=1),
        SimpleNamespace(name=model, is_python_function=True, time_range=span(10, 50), thread=1),
        SimpleNamespace(name=torch_frame, is_python_function=True, time_range=span(20, 30), thread=1),
        SimpleNamespace(name=model, is_python_function=True, time_range=span(60, 90), thread=2),
    ]
    op = SimpleNamespace(name="aten::linear", cpu_parent=None, stack=[], time_range=span(21, 29), thread=1)
    enclosing = PythonFrames([*frames, op])
    assert enclosing.around(op) == [torch_frame, model, user]  # innermost first, its own thread only
    assert _frame(op) is None and _frame(op, enclosing) == model
    late = SimpleNamespace(name="aten::mul", cpu_parent=None, stack=[], time_range=span(95, 99), thread=1)
    assert _frame(late, enclosing) == user
    parented = SimpleNamespace(name="aten::mm", stack=[], cpu_parent=SimpleNamespace(name=model, stack=[],
                                                                                      cpu_parent=None))  # fmt: skip
    assert _frame(parented) == model  # a Python-function parent names the line without any timing
    assert PythonFrames([]).around(op) == []


def test_dag_nodes_get_the_line_and_the_shapes():
    nodes = _nodes("Kernel2")
    line, shapes = "model.py(3): forward", "[8, 256], [256, 256]"
    launch = {"kernel": GEMM, "module": "mlp.up", "op": "aten::linear", "frame": line, "shapes": shapes}
    assert attach_launchers(nodes, [launch]) == 1
    assert nodes[0].detail["frame"] == line and nodes[0].detail["shapes"] == shapes


def test_triton_functions_of_a_workload_are_found_by_the_names_their_kernels_carry():
    jit = type("JITFunction", (), {"__module__": "triton.runtime.jit"})
    tuner = type("Autotuner", (), {"__module__": "triton.runtime.autotuner"})
    add, matmul = jit(), jit()
    add.__name__, matmul.__name__ = "add_kernel", "matmul_kernel"
    tuned = tuner()
    tuned.fn = matmul
    module = SimpleNamespace(add_kernel=add, matmul=tuned, setup=lambda ctx: None, torch=SimpleNamespace())
    assert triton_kernel_names(module) == frozenset({"add_kernel", "matmul_kernel"})


def test_the_dag_text_lists_who_launched_each_box():
    nodes = _nodes("Kernel2", "add_kernel")
    attach_launchers(nodes, [{"kernel": GEMM, "module": "mlp.up", "op": "aten::linear"}])
    text = render_dag(Dag(nodes, [], "live", True), "live capture of w.py")
    header, first, second = text.splitlines()[1:4]
    assert header.endswith("launched by")
    assert first.endswith("mlp.up / aten::linear") and second.endswith("-")
